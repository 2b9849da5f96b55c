import { PdfDict, PdfRef, type PDF } from '@libpdf/core';
import type { AppendablePdf } from './appendable-pdf.js';
import { PdfEncrypted, PdfRestricted } from './errors.js';

type SecurityHandler = NonNullable<PDF['context']['info']['securityHandler']>;

/** Encrypts the strings and streams of one object, with that object's key (ISO 32000-1 7.6.2). */
export interface ObjectEncryption {
  string(bytes: Uint8Array): Uint8Array;
  /** Stream data; streams that stay in the clear (cross-reference, metadata when so declared) pass as is. */
  stream(data: Uint8Array, type: string | undefined): Uint8Array;
}

/**
 * The encryption of a document that opens without a password (empty user password): what an
 * incremental update needs to write its objects the way the rest of the file is written.
 */
export interface DocumentEncryption {
  /** The trailer's /Encrypt entry, carried into every new trailer. */
  entry: PdfRef | PdfDict;
  forObject(ref: PdfRef): ObjectEncryption;
}

/**
 * The encryption of a loaded document, undefined when it has none. Files that need a password to
 * open are refused (`PdfEncrypted`): Signery has no password to open them with, and a signature
 * nobody can show without it serves no one. Files encrypted with an empty user password (bank and
 * government statements) open in every viewer without asking, and are signed in place: the engine
 * authenticated with the empty password when it loaded them, and its key encrypts our new objects.
 * (The lazy reader does the same with its own handler, reader/standard-security.ts.)
 *
 * ```ts
 * const encryption = documentEncryption(pdf);
 * const bytes = serializeObject(dict, encryption?.forObject(ref));
 * ```
 */
export function documentEncryption(pdf: PDF): DocumentEncryption | undefined {
  if (!pdf.isEncrypted) return undefined;
  const handler = pdf.context.info.securityHandler;
  const trailer = pdf.context.info.trailer;
  const entry = trailer.get('Encrypt');
  if (!handler?.isAuthenticated || !(entry instanceof PdfRef || entry instanceof PdfDict)) {
    throw new PdfEncrypted();
  }
  return { entry, forObject: (ref) => objectEncryption(handler, ref) };
}

function objectEncryption(handler: SecurityHandler, ref: PdfRef): ObjectEncryption {
  return {
    string: (bytes) => handler.encryptString(bytes, ref.objectNumber, ref.generation),
    stream: (data, type) =>
      handler.shouldEncryptStream(type)
        ? handler.encryptStream(data, ref.objectNumber, ref.generation)
        : data,
  };
}

/**
 * Refuses (`PdfRestricted`) a document whose permissions forbid what every Signery change adds:
 * annotations (the visuals) and form fields (each signature is one). ISO 32000-1 Table 22, bit 6
 * ("add or modify text annotations, fill in interactive form fields"); the owner password's holder
 * has every permission, and so does whoever opens a file whose owner password is empty. Other
 * restrictions (printing, copying, assembling) do not stand in the way of a signature.
 *
 * ```ts
 * assertChangesAllowed(opened); // before writing an incremental update
 * ```
 */
export function assertChangesAllowed(opened: Pick<AppendablePdf, 'mayAnnotate'>): void {
  if (!opened.mayAnnotate) throw new PdfRestricted();
}

const DECRYPTION_WARNING = 'Failed to decrypt object';

/**
 * Runs `read`, a synchronous resolve through the engine, without the warning the engine prints on
 * stderr when it cannot decrypt a string. It tries to decrypt a signature dictionary's /Contents,
 * which is in the clear (ISO 32000-2 7.6.2); with AES that fails (with RC4 it yields noise), the
 * engine keeps the string as written and prints a stack trace. find-signatures.ts reads /Contents
 * where the byte range leaves it out instead. Other warnings pass.
 *
 * ```ts
 * const value = withoutDecryptionWarnings(() => opened.resolve(field.get('V')));
 * ```
 */
export function withoutDecryptionWarnings<T>(read: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!(typeof args[0] === 'string' && args[0].startsWith(DECRYPTION_WARNING))) warn(...args);
  };
  try {
    return read();
  } finally {
    console.warn = warn;
  }
}
