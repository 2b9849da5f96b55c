import type { Deps } from '../core/deps.js';
import { ValidationError } from '../base/errors.js';
import type { AnchorPosition, AnchorRequest } from '../pdf/anchors.js';
import { inspectPdf } from '../pdf/inspect-pdf.js';
import type { FileRecord } from '../store/files/file-store.js';

/**
 * `anchorPositions` of an upload (spec: anchor rules): one entry per anchor, one field per match,
 * pages 1-based, fractions with the origin top left; values outside 0..1 are returned as they are.
 */
export async function locateAnchors(
  deps: Deps,
  file: FileRecord,
  anchors: AnchorRequest[],
): Promise<AnchorPosition[]> {
  const bytes = new Uint8Array(await deps.files.read(file));
  const inspection = await inspectPdf(bytes);
  if (!inspection.ok) throw new ValidationError(`signatureAnchors: ${inspection.problem}`);
  return deps.anchors.find({ pdf: bytes, anchors });
}
