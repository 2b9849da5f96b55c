import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { loadEditable } from '../core/access/document-access.js';
import { ValidationError, VersionMismatch } from '../base/errors.js';
import { applyVisuals, drawnChange } from '../core/signing/apply-visuals.js';
import { replaceMainFile } from '../core/changes/new-main-file.js';
import { mainFileBytes } from '../core/changes/new-main-file.js';
import type { VisualRequest } from '../core/signing/visual-input.js';
import { writeTransaction } from '../store/db/dialect.js';

/**
 * PUT /documents/annotate/:version: images (the document's barcode, subtype `image_barcode`, or unused
 * uploads) and text annotations as annotations with their own appearance streams, one incremental
 * update, no signature: earlier signatures stay valid. Compare-and-set on the version.
 */
export async function annotateDocument(
  deps: Deps,
  actor: Actor,
  options: { id: string; version: number } & VisualRequest,
): Promise<{ status: 'SUCCESS' }> {
  if (!options.images?.length && !options.annotations?.length && !options.signatures?.length) {
    throw new ValidationError('images', 'or "annotations" is required');
  }
  const doc = await loadEditable(deps.db, actor, options.id, deps.clock.now());
  if (doc.version !== options.version) throw new VersionMismatch();
  const { file: previous, bytes } = await mainFileBytes(deps, doc);
  const now = deps.clock.now();
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const applied = await applyVisuals(trx, deps, {
      pdf: bytes,
      placer: { kind: 'user', actor },
      request: options,
      document: { id: doc.id, title: doc.title, barcodeFileId: doc.barcode_file_id },
      author: actor.name,
      now,
    });
    await replaceMainFile(trx, deps, {
      doc,
      previous,
      bytes: applied.pdf,
      by: actor,
      expectedVersion: options.version,
      ...drawnChange(applied),
      now,
    });
  });
  return { status: 'SUCCESS' };
}
