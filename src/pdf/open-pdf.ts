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
  const startxref = readStartxref(bytes);
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
  const encryption = documentEncryption(pdf);
  if (pdf.recoveredViaBruteForce) {
    throw new PdfInvalid(
      'The PDF is damaged (its cross-reference table is broken); repair it before signing',
    );
  }
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

/** The offset after the last `startxref`, checked to point inside the file at a cross-reference section. */
function readStartxref(bytes: Uint8Array): number {
  const tail = Buffer.from(bytes.subarray(Math.max(0, bytes.length - EDGE))).toString('latin1');
  if (!tail.includes('%%EOF')) throw new PdfInvalid('The PDF is truncated (no end-of-file marker)');
  const match = /startxref\s+(\d+)\s+%%EOF/.exec(tail.slice(tail.lastIndexOf('startxref')));
  const offset = match ? Number(match[1]) : NaN;
  if (!Number.isSafeInteger(offset) || offset <= 0 || offset >= bytes.length) {
    throw new PdfInvalid('The PDF is truncated (no valid startxref)');
  }
  const at = Buffer.from(bytes.subarray(offset, offset + 32)).toString('latin1');
  if (!/^(xref|\d+\s+\d+\s+obj)/.test(at))
    throw new PdfInvalid('The PDF is damaged (startxref points nowhere)');
  return offset;
}
