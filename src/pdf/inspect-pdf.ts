import { PDF } from '@libpdf/core';
import { assertChangesAllowed, documentEncryption } from './encryption.js';
import { PdfEncrypted, PdfRestricted } from './errors.js';
import { assertPageCount, assertWithinPdfLimits } from './pdf-limits.js';

export type PdfInspection = { ok: true; pages: number } | { ok: false; problem: string };

const EDGE_BYTES = 1024;

/**
 * Checks that bytes are a readable, unencrypted PDF with pages, and counts them. Used before a
 * file becomes a document's main file, so a bad file gets a clear 400 naming the problem. A file over
 * `PDF_LIMITS` is not a problem to report but a refusal: `PdfTooLarge` (413) is thrown.
 *
 * ```ts
 * const inspection = await inspectPdf(bytes);
 * if (!inspection.ok) throw new ValidationError(`pdfFile: ${inspection.problem}`);
 * ```
 */
export async function inspectPdf(bytes: Uint8Array): Promise<PdfInspection> {
  const head = Buffer.from(bytes.subarray(0, Math.min(bytes.length, EDGE_BYTES))).toString('latin1');
  if (!head.includes('%PDF-')) return { ok: false, problem: 'the file is not a PDF' };
  // A PDF ends with %%EOF (possibly followed by a little whitespace); a cut-off upload does not.
  const tail = Buffer.from(bytes.subarray(Math.max(0, bytes.length - EDGE_BYTES))).toString('latin1');
  if (!tail.includes('%%EOF')) return { ok: false, problem: 'the PDF is truncated (no end-of-file marker)' };
  await assertWithinPdfLimits(bytes);
  let pdf: PDF;
  try {
    pdf = await PDF.load(bytes);
  } catch (error) {
    const detail = error instanceof Error ? error.message.slice(0, 200) : 'unreadable';
    return { ok: false, problem: `the PDF cannot be read (${detail})` };
  }
  try {
    documentEncryption(pdf);
    assertChangesAllowed(pdf);
  } catch (error) {
    if (error instanceof PdfEncrypted || error instanceof PdfRestricted)
      return { ok: false, problem: lowerFirst(error.message) };
    throw error;
  }
  let pages: number;
  try {
    pages = pdf.getPageCount();
  } catch {
    return { ok: false, problem: 'the PDF page tree cannot be read' };
  }
  if (pages < 1) return { ok: false, problem: 'the PDF has no pages' };
  assertPageCount(pages);
  return { ok: true, pages };
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
