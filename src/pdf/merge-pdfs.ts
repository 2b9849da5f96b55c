import { PDF } from '@libpdf/core';
import { assertPageCount } from './pdf-limits.js';

/**
 * Concatenates PDFs, pages in order, into a new file (PUT /documents/{id}/merge). The result is a new
 * file rather than an incremental update, so merging is refused once a document is signed.
 *
 * ```ts
 * const merged = await mergePdfs([main, appendix]);
 * ```
 */
export async function mergePdfs(sources: Uint8Array[]): Promise<Uint8Array> {
  const merged = await PDF.merge(sources);
  // Each source was read within the limits; together they must be too, or the result could not be read.
  assertPageCount(merged.getPageCount());
  return merged.save();
}
