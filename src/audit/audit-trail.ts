import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { loadManageable } from '../core/access/document-access.js';
import { defaultLevel, sealBytes } from '../core/signing/seal.js';
import { documentTrail, trailPages } from '../core/audit/document-trail.js';

/**
 * GET /documents/:id/audit: an audit-trail PDF for one document — its events (time, actor, activity,
 * detail, chain hash), its file revisions with their SHA-256 and SHA-512, and who holds it — sealed
 * with the organisation key so the trail itself is tamper-evident (pdfsig validates it). For the
 * owner and administrators of the document (others who see it: 403; everyone else: 404).
 */
export async function auditTrailPdf(deps: Deps, actor: Actor, documentId: string): Promise<Uint8Array> {
  const doc = await loadManageable(deps.db, actor, documentId);
  const trail = await documentTrail(deps.db, doc, deps.clock.now());
  const sealed = await sealBytes(deps, {
    operation: 'seal',
    pdf: await trailPages(trail, actor.name),
    signerName: 'Signery audit trail',
    level: defaultLevel(deps),
    reason: `Audit trail of document ${doc.id}`,
  });
  return sealed.pdf;
}
