import type { PdfDict, PdfObject, PdfRef } from '@libpdf/core';
import type { DocumentEncryption } from './encryption.js';
import { PdfTooLarge } from './errors.js';
import { openPdf, type OpenedPdf } from './open-pdf.js';
import { assertFileBytes } from './pdf-limits.js';
import { memorySource, type ByteSource } from './reader/byte-source.js';
import { LazyPdf } from './reader/lazy-pdf.js';
import { NotReadableLazily } from './reader/stream-data.js';

/**
 * A PDF read for an incremental update, whoever read it: the lazy reader (reader/lazy-pdf.ts, what
 * signing uses) or @libpdf/core's full parse (open-pdf.ts, for what only the engine does: drawing
 * form appearances, extracting text, verifying).
 */
export interface AppendablePdf {
  /** The file's bytes, read where needed. */
  source: ByteSource;
  /** Offset of the last cross-reference section (the next update's /Prev). */
  startxref: number;
  /** The last section is a cross-reference stream (PDF 1.5); the update writes the same kind. */
  xrefIsStream: boolean;
  /** Entries carried into the next trailer. */
  trailer: { size: number; root: PdfRef; info?: PdfRef; id?: Uint8Array };
  /** Set when the file is encrypted (with an empty user password): new objects are encrypted too. */
  encryption?: DocumentEncryption;
  /** The permissions allow annotations and form fields (ISO 32000-1 Table 22 bit 6; the owner has all). */
  mayAnnotate: boolean;
  pageCount: number;
  /** The page at a 0-based index. */
  page(index: number): { ref: PdfRef; dict: PdfDict };
  /** Dereferences an object (follows PdfRef). */
  resolve(object: PdfObject | undefined): PdfObject | undefined;
}

/** Whether `opened` is the full parse, whose engine can draw and extract. */
export function hasEngine(opened: AppendablePdf): opened is OpenedPdf {
  return 'pdf' in opened;
}

/**
 * Runs `work` on the file read lazily, and again on @libpdf/core's full parse when the lazy reader
 * meets what it leaves to the engine (`NotReadableLazily`): a structural stream with a filter other
 * than Flate, a page tree without /Count, a security handler other than the standard one, or a form
 * whose field appearances must be drawn (form-appearances.ts). `work` must do nothing but compute
 * (it may run twice). Every refusal of the lazy reader (damage, a password, limits) stands as it is.
 *
 * ```ts
 * const bytes = await updatePdf(memorySource(pdf), (opened) => {
 *   const update = new IncrementalUpdate(opened);
 *   ...
 *   return wholeFile(update.write());
 * });
 * ```
 */
export async function updatePdf<T>(
  source: ByteSource,
  work: (opened: AppendablePdf) => T | Promise<T>,
): Promise<T> {
  try {
    return await work(LazyPdf.open(source));
  } catch (error) {
    if (!(error instanceof NotReadableLazily)) throw error;
  }
  return work(await openPdf({ bytes: source.read(0, source.length) }));
}

/**
 * Runs `work` on a PDF in memory read lazily (the objects `work` asks for, each parsed once), and
 * again on @libpdf/core's full parse when the lazy reader fails in any way: cannot open the file,
 * meets what it leaves to the engine, or finds damage on the way. Whatever the lazy reader cannot
 * answer is answered as the full parse answered before it, refusals included; what it answers costs
 * the objects read, not a parse of every object and a walk of the page tree (a verification of ten
 * signatures on 300 pages spent half its time there). The lazy reading is held to PDF_LIMITS as it
 * goes (the file's size, the objects its cross-reference lists, its pages, and the streams it decodes,
 * each and together), and its refusal stands; the full parse holds the whole file to them first
 * (openPdf). `work` must do nothing but compute (it may run twice).
 *
 * ```ts
 * const signatures = await readPdf(bytes, (opened) => findSignatures({ opened }));
 * ```
 */
export async function readPdf<T>(
  bytes: Uint8Array,
  work: (opened: AppendablePdf) => T | Promise<T>,
): Promise<T> {
  assertFileBytes(bytes.length);
  let lazy: LazyPdf | undefined;
  try {
    lazy = LazyPdf.open(memorySource(bytes));
  } catch (error) {
    if (error instanceof PdfTooLarge) throw error;
    // The full parse gives the file its answer, as it did before there was a lazy reader.
  }
  if (lazy) {
    try {
      return await work(lazy);
    } catch (error) {
      if (error instanceof PdfTooLarge) throw error;
      // Damage found on the way, or what only the engine reads: the same work on the full parse.
    }
  }
  return work(await openPdf({ bytes }));
}

/** The bytes of the file a PDF was read from (no copy from memory; a file source is read whole). */
export function pdfBytes(opened: AppendablePdf): Uint8Array {
  return opened.source.read(0, opened.source.length);
}
