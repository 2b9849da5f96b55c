import type { Kysely } from 'kysely';
import type { Deps } from '../deps.js';
import { Conflict, Forbidden, ValidationError } from '../../base/errors.js';
import { callerName, callerRequestId, type RecipientCaller } from '../access/recipient-caller.js';
import { assertRequiredFilesSubmitted } from './share-fields.js';
import { NOT_REQUIRED, type ShareRow } from './share-types.js';
import { completeShare, endProcess, loadDocumentForUpdate, mailOwner } from './workflow.js';
import type { DocumentRow } from '../access/document-access.js';
import type { Database } from '../../store/db/schema.js';

/** Why a share cannot act now, or nothing when it can (its turn, not ended, not expired). */
export function assertShareCanAct(share: ShareRow, now: Date): void {
  if (share.status === 'waiting') throw new Conflict('It is not your turn yet: earlier recipients act first');
  if (share.status === NOT_REQUIRED) {
    throw new Conflict(
      'Your action is no longer needed: enough signers of your sign entity have signed (quorum reached), or the document was completed without this optional action',
    );
  }
  if (share.status !== 'active') throw new Conflict(`This share is ${share.status}`);
  if (share.valid_until && new Date(share.valid_until) <= now) throw new Conflict('This share has expired');
}

function by(caller: RecipientCaller, tenantId: string) {
  return { tenantId, name: callerName(caller), requestId: callerRequestId(caller) };
}

/**
 * A recipient's refusal, inside the caller's transaction (PUT /share/reject, Contract `{id, reason?}`):
 * the document becomes `rejected`, the other pending shares end, `signRejected` is sent and the owner
 * told. `bumpVersion` false when the call already counted its change (the recipient drew on the
 * document first, with the share right `canAnnotateOnReject`).
 */
export async function recordRejection(
  trx: Kysely<Database>,
  options: {
    share: ShareRow;
    caller: RecipientCaller;
    now: Date;
    reason?: string | undefined;
    bumpVersion?: boolean | undefined;
  },
): Promise<DocumentRow> {
  const { share, now } = options;
  const rejecter = by(options.caller, share.tenant_id);
  const doc = await loadDocumentForUpdate(trx, share.document_id);
  const ended = await endProcess(trx, {
    doc,
    state: 'rejected',
    by: rejecter,
    now,
    reason: options.reason,
    cause: share,
    bumpVersion: options.bumpVersion,
  });
  await mailOwner(trx, doc, rejecter, now, { kind: 'rejected', from: share.share_to, note: options.reason });
  return ended;
}

const SIMPLE_ACTIONS = ['approve', 'review', 'accept', 'execute'];

/**
 * Whether the share's simple action (approve, review, accept or execute) can be executed now: its
 * turn, not ended or expired, the action named (if any) its own, its required files submitted. A sign
 * share is executed by signing, a view or edit share owes nothing.
 */
export async function assertSimpleAction(
  db: Kysely<Database>,
  share: ShareRow,
  action: string | undefined,
  now: Date,
): Promise<void> {
  assertShareCanAct(share, now);
  if (!SIMPLE_ACTIONS.includes(share.purpose)) {
    throw share.purpose === 'sign'
      ? new ValidationError('signatures', 'is required: a sign share is executed by signing')
      : new ValidationError(`This share is for ${share.purpose}: use the document instead`);
  }
  if (action && action !== share.purpose) {
    throw new Forbidden(`This share allows ${share.purpose}, not ${action}`);
  }
  await assertRequiredFilesSubmitted(db, share);
}

/**
 * The recipient's simple action, inside the caller's transaction (POST /share/execute `{id, action?,
 * comment?}`): `documentSimpleActionExecuted` (audit `documentApproved`, `documentReviewed`, ...), the
 * turn passes on and the document completes when no mandatory action is pending. `bumpVersion` false
 * when the call already counted its change (the recipient drew or signed on the document first).
 */
export async function recordSimpleAction(
  trx: Kysely<Database>,
  deps: Deps,
  options: {
    share: ShareRow;
    caller: RecipientCaller;
    now: Date;
    comment?: string | undefined;
    bumpVersion?: boolean | undefined;
    /** The tenant's `sealOnComplete`, when the recipient drew first: completing queues the seal. */
    sealOnComplete?: boolean | undefined;
  },
): Promise<DocumentRow> {
  const { share } = options;
  return completeShare(trx, deps, {
    share,
    by: by(options.caller, share.tenant_id),
    now: options.now,
    event: 'documentSimpleActionExecuted',
    activityType: `document${share.purpose[0]?.toUpperCase()}${share.purpose.slice(1)}d`,
    data: { comment: options.comment ?? null },
    bumpVersion: options.bumpVersion,
    sealOnComplete: options.sealOnComplete,
  });
}
