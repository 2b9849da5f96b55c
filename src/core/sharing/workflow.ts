import type { Kysely, Updateable } from 'kysely';
import type { Deps } from '../deps.js';
import type { DocumentRow } from '../access/document-access.js';
import { changeDocument, type DocumentChanger } from '../changes/change-document.js';
import { queueMail } from '../../jobs/notification-jobs.js';
import { shareMail } from '../../notify/mail/share-mail.js';
import type { Database, DocumentTable } from '../../store/db/schema.js';
import type { EventName } from '../events/emit-event.js';
import { queueCompletionMails, queueSealOnComplete } from './completion.js';
import { queuePreviewAhead } from './preview-ahead.js';
import { queueShareMail, sharersOf } from './share-mails.js';
import { settleSignEntity } from './sign-entities.js';
import { ACTION_PURPOSES, NOT_REQUIRED, owesAction, PENDING, type ShareRow } from './share-types.js';

/**
 * The document share state machine (spec: States and transitions) in one place: a recipient's action
 * completes their share, hands the turn to the next in a sequence, and completes the document when
 * no mandatory action is pending; rejection, cancellation and expiry end the process, and a new
 * POST /share with a sign purpose starts a new round from any state.
 */

/**
 * Invites recipients whose turn it is (or whose share was just moved to them): a user by a link to the
 * document, an external recipient by a new share link (the links sent before it keep working).
 */
export async function notifyTurn(
  trx: Kysely<Database>,
  deps: Deps,
  doc: DocumentRow,
  shares: ShareRow[],
  now: Date,
  requestId: string,
) {
  if (shares.some((share) => share.email)) await queuePreviewAhead(trx, doc, now);
  const sharers = sharersOf(trx);
  for (const share of shares) {
    if (!share.email) continue;
    // External recipients of a sequence get their link only now, when they can act on it.
    await queueShareMail(
      trx,
      deps,
      share,
      { kind: 'invitation', documentTitle: doc.title, sharers },
      now,
      requestId,
    );
  }
}

export async function loadDocumentForUpdate(trx: Kysely<Database>, documentId: string): Promise<DocumentRow> {
  return trx.selectFrom('documents').selectAll().where('id', '=', documentId).executeTakeFirstOrThrow();
}

/**
 * A recipient finished their action (`signed`, or a simple action). Returns the document as it now is.
 */
export async function completeShare(
  trx: Kysely<Database>,
  deps: Deps,
  options: {
    share: ShareRow;
    by: DocumentChanger;
    now: Date;
    event: EventName;
    activityType: string;
    data?: Record<string, unknown>;
    /** Changes to the document made by the action itself (a signed main file). */
    set?: Updateable<DocumentTable>;
    /** False when the call already counted its change (it drew on the document first). */
    bumpVersion?: boolean | undefined;
    /** The tenant's `sealOnComplete`, given by a signer's change: completing the document queues its seal. */
    sealOnComplete?: boolean | undefined;
  },
): Promise<DocumentRow> {
  const { share, by, now } = options;
  await trx
    .updateTable('shares')
    .set({
      status: 'done',
      acted_at: now.toISOString(),
      next_reminder_at: null,
      updated_at: now.toISOString(),
    })
    .where('id', '=', share.id)
    .execute();
  // A sign entity with its quorum no longer awaits its other members (sign-entities.ts).
  const entity = await settleSignEntity(trx, share, now);
  let doc = await loadDocumentForUpdate(trx, share.document_id);
  doc = await changeDocument(trx, by, {
    doc,
    expectedVersion: doc.version,
    set: options.set ?? {},
    activityType: options.activityType,
    event: options.event,
    data: { shareId: share.id, purpose: share.purpose, ...options.data, ...entity },
    now,
    bumpVersion: options.bumpVersion,
  });

  return advanceWorkflow(trx, deps, { doc, by, now, sealOnComplete: options.sealOnComplete });
}

/**
 * After a share stopped owing its action (acted, or its recipient was removed): in a sequence the next
 * position's recipients get their turn, and a document in progress is `completed` once no mandatory
 * action of the workflow is pending, whatever its purpose (sign, approve, review, ...). Optional shares
 * still pending then are no longer awaited (`notRequired`). With `sealOnComplete` (a signer's change, in
 * a tenant that seals on completion) the completion queues the organisation seal.
 */
export async function advanceWorkflow(
  trx: Kysely<Database>,
  deps: Deps,
  options: { doc: DocumentRow; by: DocumentChanger; now: Date; sealOnComplete?: boolean | undefined },
): Promise<DocumentRow> {
  const { by, now } = options;
  let doc = options.doc;
  const pending = await trx
    .selectFrom('shares')
    .selectAll()
    .where('document_id', '=', doc.id)
    .where('status', 'in', [...PENDING])
    .orderBy('position')
    .execute();
  const owing = pending.filter((s) => ACTION_PURPOSES.includes(s.purpose));
  if (owing.length > 0 && !owing.some((s) => s.status === 'active')) {
    // Sequential: the next position's recipients get their turn.
    const next = owing.filter((s) => s.position === owing[0]?.position);
    await trx
      .updateTable('shares')
      .set({ status: 'active', updated_at: now.toISOString() })
      .where(
        'id',
        'in',
        next.map((s) => s.id),
      )
      .execute();
    await notifyTurn(trx, deps, doc, next, now, by.requestId);
  }

  if (doc.share_state !== 'inprogress' || pending.some(owesAction)) return doc;
  // A round in which nobody acted (its only recipients were withdrawn) is not a completion: the owner
  // sends it again or cancels it.
  const actedAny = await trx
    .selectFrom('shares')
    .select('id')
    .where('document_id', '=', doc.id)
    .where('purpose', 'in', [...ACTION_PURPOSES])
    .where('status', '=', 'done')
    .executeTakeFirst();
  if (!actedAny) return doc;
  const optional = owing.map((s) => s.id);
  if (optional.length > 0) {
    await trx
      .updateTable('shares')
      .set({ status: NOT_REQUIRED, next_reminder_at: null, updated_at: now.toISOString() })
      .where('id', 'in', optional)
      .execute();
  }
  doc = await changeDocument(trx, by, {
    doc,
    expectedVersion: doc.version,
    set: { share_state: 'completed' },
    activityType: 'documentCompleted',
    event: 'documentCompleted',
    now,
  });
  // The seal is queued with the completion, so it exists as durable work exactly when the completion
  // does; the signer's call runs it after its commit (afterSignature), a worker if that call dies.
  if (options.sealOnComplete) await queueSealOnComplete(trx, { doc, by, now });
  await queueCompletionMails(trx, doc, now, by.requestId);
  return doc;
}

/** Tells the document's owner (when they have an e-mail address) that the process reached an end. */
export async function mailOwner(
  trx: Kysely<Database>,
  doc: DocumentRow,
  by: Pick<DocumentChanger, 'requestId'>,
  now: Date,
  mail: { kind: 'rejected'; from: string; link?: string; note?: string | undefined },
): Promise<void> {
  const owner = await trx
    .selectFrom('users')
    .select('email')
    .where('id', '=', doc.owner_id)
    .executeTakeFirst();
  if (!owner?.email) return;
  await queueMail(trx, shareMail({ ...mail, to: owner.email, documentTitle: doc.title }), now, by.requestId);
}

/**
 * Ends the process of a document: `rejected` (a recipient refused), `cancelled` (the owner withdrew)
 * or `expired` (a share's validity passed without completion). Every share still owing something
 * ends with it.
 */
export async function endProcess(
  trx: Kysely<Database>,
  options: {
    doc: DocumentRow;
    state: 'rejected' | 'cancelled' | 'expired';
    by: DocumentChanger;
    now: Date;
    reason?: string | undefined;
    /** The share that caused it (rejection, expiry); it takes the state itself, the others `cancelled`. */
    cause?: ShareRow | undefined;
    /** False when the call already counted its change (the recipient drew on the document first). */
    bumpVersion?: boolean | undefined;
  },
): Promise<DocumentRow> {
  const { doc, state, now } = options;
  if (options.cause) {
    await trx
      .updateTable('shares')
      .set({
        status: state,
        reason: options.reason ?? null,
        acted_at: now.toISOString(),
        updated_at: now.toISOString(),
      })
      .where('id', '=', options.cause.id)
      .execute();
  }
  await trx
    .updateTable('shares')
    .set({
      status: state === 'expired' ? 'expired' : 'cancelled',
      next_reminder_at: null,
      updated_at: now.toISOString(),
    })
    .where('document_id', '=', doc.id)
    .where('status', 'in', [...PENDING])
    .execute();
  const event: EventName =
    state === 'rejected' ? 'signRejected' : state === 'cancelled' ? 'signCancelled' : 'signExpired';
  return changeDocument(trx, options.by, {
    doc,
    expectedVersion: doc.version,
    set: { share_state: state },
    activityType: event,
    event,
    // What ended it is named: the share, its recipient and purpose (and, on expiry, its validUntil).
    data: {
      reason: options.reason ?? null,
      shareId: options.cause?.id ?? null,
      ...(options.cause
        ? {
            shareTo: options.cause.share_to,
            purpose: options.cause.purpose,
            ...(state === 'expired' ? { validUntil: options.cause.valid_until } : {}),
          }
        : {}),
    },
    now,
    bumpVersion: options.bumpVersion,
  });
}
