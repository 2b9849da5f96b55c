import { PDF, PdfDict, PdfRef, PdfString, type PdfObject } from '@libpdf/core';
import type { AppendablePdf } from './appendable-pdf.js';
import { documentEncryption } from './encryption.js';
import { damagedPdf, PdfEncrypted, PdfInvalid, XREF_DAMAGE } from './errors.js';
import { assertPageCount, assertWithinPdfLimits } from './pdf-limits.js';
import { memorySource } from './reader/byte-source.js';
import { endsWithEofMarker, findStartxref } from './reader/read-cross-reference.js';

/**
 * A PDF read whole by @libpdf/core (the full parse), for what only the engine does: drawing form
 * appearances, extracting text, verifying. Signing reads lazily (reader/lazy-pdf.ts).
 */
export interface OpenedPdf extends AppendablePdf {
  bytes: Uint8Array;
  pdf: PDF;
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
    throw damagedPdf(startxref === undefined ? XREF_DAMAGE.startxrefNowhere : XREF_DAMAGE.xrefBroken);
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
  let pages: ReturnType<PDF['getPages']> | undefined;
  return {
    bytes,
    pdf,
    source: memorySource(bytes),
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
    mayAnnotate: pdf.getPermissions().annotate,
    pageCount,
    page(index) {
      pages ??= pdf.getPages();
      const page = pages[index];
      if (!page) throw new RangeError(`No page ${index + 1} in ${pageCount}`);
      return page;
    },
    resolve,
  };
}

/** Whether the file ends with `%%EOF` (possibly followed by a little whitespace); a cut-off upload does not. */
export function hasEndMarker(bytes: Uint8Array): boolean {
  return endsWithEofMarker(memorySource(bytes));
}

/**
 * The offset after the last `startxref`, when it points inside the file at a cross-reference section
 * (a table, or a stream object); undefined when it does not.
 */
export function readStartxref(bytes: Uint8Array): number | undefined {
  return findStartxref(memorySource(bytes));
}
