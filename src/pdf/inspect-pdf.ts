import type { AppendablePdf } from './appendable-pdf.js';
import { assertChangesAllowed } from './encryption.js';
import { PdfEncrypted, PdfInvalid, PdfRestricted, PdfTooLarge } from './errors.js';
import { openPdf } from './open-pdf.js';
import type { ByteSource } from './reader/byte-source.js';
import { LazyPdf } from './reader/lazy-pdf.js';
import { NotReadableLazily } from './reader/stream-data.js';

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
  return inspection(() => openPdf({ bytes }));
}

/**
 * `inspectPdf` for a file too large to read whole, read where it lies as signing reads it (lazily):
 * the same checks of what signing needs, without the parsing limits of the full parse, which would
 * have to read it all. A file whose structure only the full parse reads (NotReadableLazily) is
 * `PdfTooLarge`: signing would have to read it whole.
 *
 * ```ts
 * const inspection = await inspectPdfSource(fileSource(fd, size));
 * ```
 */
export async function inspectPdfSource(source: ByteSource): Promise<PdfInspection> {
  return inspection(() => {
    try {
      return LazyPdf.open(source);
    } catch (error) {
      if (!(error instanceof NotReadableLazily)) throw error;
      throw new PdfTooLarge(
        `The PDF is too large for Signery to read whole, and ${error.message} needs a whole read`,
      );
    }
  });
}

async function inspection(open: () => AppendablePdf | Promise<AppendablePdf>): Promise<PdfInspection> {
  try {
    const opened = await open();
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
