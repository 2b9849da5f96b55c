import type { Deps } from '../deps.js';
import { inspectPdf, inspectPdfSource, type PdfInspection } from '../../pdf/inspect-pdf.js';
import { fileSource } from '../../pdf/reader/byte-source.js';
import type { FileRecord } from '../../store/files/file-store.js';

/**
 * Stored PDFs up to this size are read whole to be checked or signed: one read, and every check of
 * the full parse (PDF_LIMITS). Larger ones are read where they lie, as signing reads them (lazily):
 * what a whole read would cost grows with the file, what signing reads does not (issue 26).
 */
export const READ_WHOLE_MAX_BYTES = 32 * 1024 * 1024;

/**
 * Whether a stored file is a PDF Signery can sign, and its page count (pdf/inspect-pdf.ts): a small
 * file by the full parse, within PDF_LIMITS (413 past them); a large one as signing will read it,
 * from the store without holding it whole.
 *
 * ```ts
 * const inspection = await inspectStoredPdf(deps, file);
 * if (!inspection.ok) throw new ValidationError(`pdfFile: ${inspection.problem}`);
 * ```
 */
export async function inspectStoredPdf(
  deps: Pick<Deps, 'files'>,
  file: Pick<FileRecord, 'sha256' | 'size'>,
): Promise<PdfInspection> {
  if (file.size <= READ_WHOLE_MAX_BYTES) return inspectPdf(await deps.files.read(file));
  const local = await deps.files.openFile(file);
  try {
    return inspectPdfSource(fileSource(local.fd, local.size));
  } finally {
    await local.close();
  }
}
