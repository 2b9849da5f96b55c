import { assertChangesAllowed } from './encryption.js';
import { PdfEncrypted, PdfInvalid, PdfRestricted } from './errors.js';
import { openPdf } from './open-pdf.js';

export type PdfInspection = { ok: true; pages: number } | { ok: false; problem: string };

/**
 * Checks that bytes are a PDF Signery can sign, and counts its pages. Used before a file becomes a
 * document's main file, so a bad file gets a clear 400 naming the problem instead of being accepted
 * and then refused by every sign and seal (issue 23): it opens the file exactly as signing does
 * (`openPdf`) and checks that its permissions allow the changes signing makes. A file over
 * `PDF_LIMITS` is not a problem to report but a refusal: `PdfTooLarge` (413) is thrown.
 *
 * ```ts
 * const inspection = await inspectPdf(bytes);
 * if (!inspection.ok) throw new ValidationError(`pdfFile: ${inspection.problem}`);
 * ```
 */
export async function inspectPdf(bytes: Uint8Array): Promise<PdfInspection> {
  try {
    const opened = await openPdf({ bytes });
    assertChangesAllowed(opened);
    return { ok: true, pages: opened.pageCount };
  } catch (error) {
    if (error instanceof PdfInvalid || error instanceof PdfEncrypted || error instanceof PdfRestricted)
      return { ok: false, problem: lowerFirst(error.message) };
    throw error;
  }
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
