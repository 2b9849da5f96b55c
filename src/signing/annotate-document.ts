import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { loadEditable } from '../core/access/document-access.js';
import { ValidationError, VersionMismatch } from '../base/errors.js';
import { commitDrawn, drawAndCommit } from '../core/signing/signer-change.js';
import type { VisualRequest } from '../core/signing/visual-input.js';

/**
 * PUT /documents/annotate/:version: images (the document's barcode, subtype `image_barcode`, or unused
 * uploads) and text annotations as annotations with their own appearance streams, one incremental
 * update, no signature: earlier signatures stay valid. Drawn first, then committed in one short
 * transaction (drawAndCommit), compare-and-set on the version.
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
  const signer = {
    doc,
    share: undefined,
    signerName: actor.name,
    by: actor,
    placer: { kind: 'user' as const, actor },
    caller: { kind: 'internal' as const, actor },
  };
  const { signatures, images, annotations } = options;
  await drawAndCommit(deps, signer, { request: { signatures, images, annotations } }, (trx, drawn, now) =>
    commitDrawn(trx, deps, signer, drawn, now),
  );
  return { status: 'SUCCESS' };
}
