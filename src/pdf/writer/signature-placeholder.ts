import { createHash } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { PdfObject } from '@libpdf/core';
import { nodeHashName, type DigestAlgorithm } from '../../pki/algorithms.js';
import type { ObjectEncryption } from '../encryption.js';
import type { ByteSource } from '../reader/byte-source.js';
import { PlaceholderTooSmall, PreparedSignatureMismatch } from '../errors.js';
import type { RawBody, WrittenUpdate } from './incremental-writer.js';
import { formatName, serializeObject } from './serialize-object.js';

export type ByteRange = [number, number, number, number];

export interface SignatureDictionaryOptions {
  type: 'Sig' | 'DocTimeStamp';
  subFilter: 'ETSI.CAdES.detached' | 'ETSI.RFC3161';
  /** Bytes reserved for the DER in /Contents (twice as many hex digits). */
  contentsSize: number;
  /** /M, /Name, /Reason, /Location, /Prop_Build ... */
  entries?: Record<string, PdfObject>;
  /** In an encrypted document, the key of the object the dictionary is written as (`update.encryptionFor`). */
  encryption?: ObjectEncryption;
}

export interface SignatureDictionary {
  body: RawBody;
  /** Offsets inside the body of the /ByteRange array's `[` and of /Contents' `<`. */
  byteRangeAt: number;
  byteRangeLength: number;
  contentsAt: number;
}

// Wide enough for four ten-digit numbers: the array is patched in place, padded with spaces.
const BYTE_RANGE_PLACEHOLDER = `[0 ${'0'.repeat(10)} ${'0'.repeat(10)} ${'0'.repeat(10)}]`;

/**
 * A signature dictionary with its two placeholders, written as raw bytes so their offsets are known:
 * /ByteRange is filled in once the update is laid out, /Contents once the CMS exists. In an encrypted
 * document the other entries' strings are encrypted; /Contents never is (ISO 32000-2 7.6.2: the
 * signature value stays in the clear, so validators read what the byte range leaves out).
 *
 * ```ts
 * const sigRef = update.allocate();
 * const dict = signatureDictionary({ type: 'Sig', subFilter: 'ETSI.CAdES.detached', contentsSize: 16384,
 *   encryption: update.encryptionFor(sigRef) });
 * update.set(sigRef, dict.body);
 * ```
 */
export function signatureDictionary(options: SignatureDictionaryOptions): SignatureDictionary {
  let text = `<< /Type /${options.type} /Filter /Adobe.PPKLite /SubFilter /${options.subFilter} /ByteRange `;
  const byteRangeAt = text.length;
  text += `${BYTE_RANGE_PLACEHOLDER} /Contents `;
  const contentsAt = text.length;
  text += `<${'0'.repeat(options.contentsSize * 2)}>`;
  const parts = [Buffer.from(text, 'latin1')];
  for (const [key, value] of Object.entries(options.entries ?? {})) {
    parts.push(
      Buffer.from(` ${formatName(key)} `, 'latin1'),
      Buffer.from(serializeObject(value, options.encryption)),
    );
  }
  parts.push(Buffer.from(' >>'));
  return {
    body: { raw: new Uint8Array(Buffer.concat(parts)) },
    byteRangeAt,
    byteRangeLength: BYTE_RANGE_PLACEHOLDER.length,
    contentsAt,
  };
}

/**
 * Writes the final /ByteRange into a laid-out update (in place): everything but the /Contents hex
 * string including its angle brackets.
 *
 * ```ts
 * const written = update.write();
 * const byteRange = fillByteRange({ written, objectNumber: sigRef.objectNumber, dictionary });
 * ```
 */
export function fillByteRange(options: {
  written: WrittenUpdate;
  objectNumber: number;
  dictionary: SignatureDictionary;
}): ByteRange {
  const { base, tail, bodyOffsets } = options.written;
  const body = bodyOffsets.get(options.objectNumber);
  if (body === undefined) throw new Error('The signature dictionary was not written');
  // The dictionary is in the update: offsets into the tail are the file's less the base's length.
  const contentsStart = body + options.dictionary.contentsAt;
  const close = tail.indexOf(0x3e, contentsStart - base.length + 1);
  const afterContents = (close === -1 ? tail.length : close + 1) + base.length;
  const fileLength = base.length + tail.length;
  const byteRange: ByteRange = [0, contentsStart, afterContents, fileLength - afterContents];
  const value = `[0 ${byteRange[1]} ${byteRange[2]} ${byteRange[3]}`;
  const padded = `${value.padEnd(options.dictionary.byteRangeLength - 1, ' ')}]`;
  if (padded.length !== options.dictionary.byteRangeLength)
    throw new Error('ByteRange does not fit its placeholder');
  tail.write(padded, body + options.dictionary.byteRangeAt - base.length, 'latin1');
  return byteRange;
}

/** Bytes hashed per read, and at most between two turns of the event loop (a few milliseconds). */
const DIGEST_CHUNK = 4 * 1024 * 1024;

/**
 * The digest of a ByteRange's signed bytes, read from `source` piece by piece: a file on disk is
 * hashed without being held in memory, one in memory without being copied. Between pieces the event
 * loop turns, so hashing a 1 GB file holds up no other request for more than one piece. Bytes whose
 * digest the source already knows (`ByteSource.knownPrefix`) are not read again.
 *
 * ```ts
 * const messageDigest = await byteRangeDigest('SHA-256', appendedSource(written.base, written.tail), byteRange);
 * ```
 */
export async function byteRangeDigest(
  algorithm: DigestAlgorithm,
  source: ByteSource,
  byteRange: ByteRange,
): Promise<Uint8Array> {
  const name = nodeHashName(algorithm);
  const known = source.knownPrefix;
  const skip =
    known && known.algorithm === name && byteRange[0] === 0 && known.bytes <= byteRange[1]
      ? known
      : undefined;
  const hash = skip ? (await skip.state).copy() : createHash(name);
  const skipped = skip?.bytes ?? 0;
  let sinceTurn = 0;
  for (const [start, length] of [
    [byteRange[0] + skipped, byteRange[1] - skipped],
    [byteRange[2], byteRange[3]],
  ] as const) {
    for (let at = start; at < start + length; at += DIGEST_CHUNK) {
      if (sinceTurn >= DIGEST_CHUNK) {
        await nextTurn();
        sinceTurn = 0;
      }
      const chunk = source.read(at, Math.min(at + DIGEST_CHUNK, start + length));
      hash.update(chunk);
      sinceTurn += chunk.length;
    }
  }
  return new Uint8Array(hash.digest());
}

/**
 * The signed bytes of a ByteRange, as one buffer.
 *
 * ```ts
 * const messageDigest = digest('SHA-256', signedBytes(pdf, byteRange));
 * ```
 */
export function signedBytes(bytes: Uint8Array, byteRange: ByteRange): Uint8Array {
  return new Uint8Array(
    Buffer.concat([
      bytes.subarray(byteRange[0], byteRange[0] + byteRange[1]),
      bytes.subarray(byteRange[2], byteRange[2] + byteRange[3]),
    ]),
  );
}

/**
 * Puts a DER value into the /Contents gap of a ByteRange, zero-padded (in place on a copy). The gap
 * must still be all zeros: a prepared file is finished once.
 *
 * ```ts
 * const signed = embedContents({ pdf: prepared, byteRange, der: cms });
 * ```
 */
export function embedContents(options: {
  pdf: Uint8Array;
  byteRange: ByteRange;
  der: Uint8Array;
}): Uint8Array {
  const pdf = new Uint8Array(options.pdf);
  writeContents(pdf, 0, options);
  return pdf;
}

/**
 * `embedContents` into an update just written (in place, in its tail): the file it extends is neither
 * read nor copied.
 *
 * ```ts
 * embedInUpdate({ written, byteRange, der: token });
 * ```
 */
export function embedInUpdate(options: {
  written: WrittenUpdate;
  byteRange: ByteRange;
  der: Uint8Array;
}): void {
  const { base, tail } = options.written;
  writeContents(tail, base.length, { ...options, fileLength: base.length + tail.length });
}

/** Writes the DER's hex into the /Contents gap of `target`, which holds the file from `offset` on. */
function writeContents(
  target: Uint8Array,
  offset: number,
  options: { byteRange: ByteRange; der: Uint8Array; fileLength?: number },
): void {
  const { byteRange, der } = options;
  const start = byteRange[1] + 1 - offset;
  const end = byteRange[2] - 1 - offset;
  const fileLength = options.fileLength ?? target.length;
  if (
    start < 1 ||
    target[start - 1] !== 0x3c ||
    target[end] !== 0x3e ||
    fileLength !== byteRange[2] + byteRange[3]
  ) {
    throw new PreparedSignatureMismatch('The prepared PDF does not match its signature placeholder');
  }
  const gap = Buffer.from(target.buffer, target.byteOffset + start, end - start);
  if (!gap.equals(Buffer.alloc(end - start, 0x30)))
    throw new PreparedSignatureMismatch('The prepared PDF is already signed');
  const hex = Buffer.from(der).toString('hex');
  if (hex.length > end - start) {
    throw new PlaceholderTooSmall(
      `The signature needs ${der.length} bytes; ${(end - start) / 2} were reserved`,
    );
  }
  target.set(Buffer.from(hex, 'latin1'), start);
}
