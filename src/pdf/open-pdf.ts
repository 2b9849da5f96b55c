import { PDF, PdfDict, PdfRef, PdfString, type PdfObject } from '@libpdf/core';
import { documentEncryption, type DocumentEncryption } from './encryption.js';
import { PdfEncrypted, PdfInvalid } from './errors.js';
import { assertPageCount, assertWithinPdfLimits } from './pdf-limits.js';

/** A PDF read for an incremental update: the library's view plus what the writer needs from the file. */
export interface OpenedPdf {
  bytes: Uint8Array;
  pdf: PDF;
  /** Offset of the last cross-reference section (the next update's /Prev). */
  startxref: number;
  /** The last section is a cross-reference stream (PDF 1.5); the update writes the same kind. */
  xrefIsStream: boolean;
  /** Entries carried into the next trailer. */
  trailer: { size: number; root: PdfRef; info?: PdfRef; id?: Uint8Array };
  /** Set when the file is encrypted (with an empty user password): new objects are encrypted too. */
  encryption?: DocumentEncryption;
  /** Dereferences an object (follows PdfRef). */
  resolve(object: PdfObject | undefined): PdfObject | undefined;
}

const EDGE = 1024;

/**
 * Opens PDF bytes for reading and appending. Refuses what an incremental update cannot serve safely:
 * garbage, truncated files (no startxref/%%EOF at the end), files readable only by reconstruction,
 * and files that need a password to open (`PdfInvalid`, `PdfEncrypted`), and files over `PDF_LIMITS`
 * before the engine reads them (`PdfTooLarge`, 413). Files encrypted with an empty user password open,
 * with `encryption` set for the writer.
 *
 * ```ts
 * const opened = await openPdf({ bytes });
 * const pages = opened.pdf.getPages();
 * ```
 */
export async function openPdf(options: { bytes: Uint8Array }): Promise<OpenedPdf> {
  const { bytes } = options;
  const head = Buffer.from(bytes.subarray(0, EDGE)).toString('latin1');
  if (!head.includes('%PDF-')) throw new PdfInvalid('The file is not a PDF');
  if (!hasEndMarker(bytes)) throw new PdfInvalid('The PDF is truncated (no end-of-file marker)');
  await assertWithinPdfLimits(bytes);
  let pdf: PDF;
  try {
    pdf = await PDF.load(bytes);
  } catch (error) {
    if (/encrypt|password|decrypt/i.test(error instanceof Error ? error.message : ''))
      throw new PdfEncrypted();
    throw new PdfInvalid(
      `The PDF cannot be read (${error instanceof Error ? error.message.slice(0, 160) : 'unknown'})`,
    );
  }
  const startxref = readStartxref(bytes);
  if (startxref === undefined || pdf.recoveredViaBruteForce) {
    throw new PdfInvalid(
      `The PDF is damaged: ${startxref === undefined ? STARTXREF_NOWHERE : XREF_BROKEN}; repair it before signing`,
    );
  }
  const encryption = documentEncryption(pdf);
  let pageCount = 0;
  try {
    pageCount = pdf.getPageCount();
  } catch {
    throw new PdfInvalid('The PDF page tree cannot be read');
  }
  if (pageCount < 1) throw new PdfInvalid('The PDF has no pages');
  assertPageCount(pageCount);

  const registry = pdf.context.registry;
  const resolve = (object: PdfObject | undefined): PdfObject | undefined =>
    object instanceof PdfRef ? (registry.resolve(object) ?? undefined) : object;
  const trailerDict = pdf.context.info.trailer;
  const root = trailerDict.getRef('Root');
  if (!root || !(resolve(root) instanceof PdfDict)) throw new PdfInvalid('The PDF has no catalog');
  const idArray = trailerDict.getArray('ID');
  const firstId = idArray?.at(0);
  return {
    bytes,
    pdf,
    startxref,
    xrefIsStream: !Buffer.from(bytes.subarray(startxref, startxref + 4))
      .toString('latin1')
      .startsWith('xref'),
    trailer: {
      size: Math.max(trailerDict.getNumber('Size')?.value ?? 0, registry.nextObjectNumber),
      root,
      info: trailerDict.getRef('Info'),
      id: firstId instanceof PdfString ? firstId.bytes : undefined,
    },
    ...(encryption ? { encryption } : {}),
    resolve,
  };
}

/** What is wrong with a file whose last startxref is unusable, and with one read only by reconstruction. */
const STARTXREF_NOWHERE = 'its startxref does not point to a cross-reference section';
const XREF_BROKEN = 'its cross-reference table does not match where its objects are';

/** Whether the file ends with `%%EOF` (possibly followed by a little whitespace); a cut-off upload does not. */
export function hasEndMarker(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.subarray(Math.max(0, bytes.length - EDGE)))
    .toString('latin1')
    .includes('%%EOF');
}

/**
 * The offset after the last `startxref`, when it points inside the file at a cross-reference section
 * (a table, or a stream object); undefined when it does not.
 */
export function readStartxref(bytes: Uint8Array): number | undefined {
  const tail = Buffer.from(bytes.subarray(Math.max(0, bytes.length - EDGE))).toString('latin1');
  const match = /startxref\s+(\d+)\s+%%EOF/.exec(tail.slice(tail.lastIndexOf('startxref')));
  const offset = match ? Number(match[1]) : NaN;
  if (!Number.isSafeInteger(offset) || offset <= 0 || offset >= bytes.length) return undefined;
  const at = Buffer.from(bytes.subarray(offset, offset + 32)).toString('latin1');
  return /^(xref|\d+\s+\d+\s+obj)/.test(at) ? offset : undefined;
}
