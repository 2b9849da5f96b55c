import type { Kysely } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import type { DocumentRow } from '../core/access/document-access.js';
import { Conflict, ValidationError } from '../base/errors.js';
import type { Database } from '../store/db/schema.js';
import { writeJson } from '../store/db/json.js';
import { checkOAuthFactors } from './create-shares.js';
import { endRecipientSessions } from '../core/sharing/recipient-session.js';
import { revokeShareLinks } from '../core/sharing/share-links.js';
import { resolveRecipient } from './resolve-recipient.js';
import { PENDING, shareOptions, type ShareRow } from '../core/sharing/share-types.js';
import { notifyTurn } from '../core/sharing/workflow.js';

/**
 * PUT /share `shareTo` (spec Sharing rule 5: PUT /share replaces the removed PUT /share/{shareId}/recipient):
 * moves a pending share to another recipient. The share keeps its place, purpose, fields and
 * protections; its `email` factor follows the new recipient; the old link and the old recipient's
 * sessions stop working at once. The new recipient is invited now when it is their turn (a waiting
 * share gets its link with the turn), and the audit records who moved it from whom to whom.
 */
export async function changeRecipient(
  trx: Kysely<Database>,
  deps: Deps,
  options: { actor: Actor; share: ShareRow; doc: DocumentRow; shareTo: string; at: string; now: Date },
): Promise<void> {
  const { actor, share, doc, at, now } = options;
  const next = await resolveRecipient(trx, actor.tenantId, options.shareTo, at);
  const newName = next.user ? next.user.name : next.key;
  if (newName === share.share_to) return;
  const others = await trx
    .selectFrom('shares')
    .select('id')
    .where('document_id', '=', share.document_id)
    .where('id', '!=', share.id)
    .where('status', 'in', [...PENDING])
    .where('share_to', '=', newName)
    .executeTakeFirst();
  // spec Sharing rule 1: a recipient appears once.
  if (others) throw new Conflict(`${newName} already has a pending share of this document`);
  if (next.user && (share.password_hash || share.phone || shareOptions(share).emailCode)) {
    // Contract: no edit weakens a protection it does not name; these protect external links only.
    throw new ValidationError(
      `${at}.shareTo`,
      'names a user, but the share has a password, phone or emailCode: remove them (null) in the same edit',
    );
  }
  const options_ = shareOptions(share);
  options_.oauthFactors = checkOAuthFactors(
    options_.oauthFactors.map((f) => (f.type === 'email' && next.email ? { ...f, value: next.email } : f)),
    options_.allowedOAuths,
    next.email,
    at,
  );
  await trx
    .updateTable('shares')
    .set({
      share_to: newName,
      user_id: next.user?.id ?? null,
      email: next.email,
      message_read: 0,
      identity_provider: null,
      identity_verified_at: null,
      options: writeJson(options_),
      updated_at: now.toISOString(),
    })
    .where('id', '=', share.id)
    .execute();
  // The old recipient's links and sessions open nothing any more; the new one is mailed a link.
  await revokeShareLinks(trx, share.id);
  await endRecipientSessions(trx, share.id);
  await recordAction(trx, actor, {
    activityType: 'shareRecipientChanged',
    objectType: doc.kind,
    objectId: doc.id,
    data: { shareId: share.id, purpose: share.purpose, from: share.share_to, to: newName },
    at: now,
  });
  if (share.status !== 'active') return;
  const moved = await trx
    .selectFrom('shares')
    .selectAll()
    .where('id', '=', share.id)
    .executeTakeFirstOrThrow();
  await notifyTurn(trx, deps, doc, [moved], now, actor.requestId);
}
