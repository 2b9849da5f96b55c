import type { Kysely } from 'kysely';
import type { Deps } from '../deps.js';
import type { CustomField } from '../documents/custom-fields.js';
import { shapeDocument, withViewParts, type DocumentView } from '../views/document-view.js';
import { Conflict, Forbidden, NotFound, ValidationError } from '../../base/errors.js';
import { readJson } from '../../store/db/json.js';
import { loadCallerShare } from './recipient.js';
import { callerName, callerRequestId, type RecipientCaller } from '../access/recipient-caller.js';
import { assertRequiredFilesSubmitted, showShareFields, type SignatureFieldView } from './share-fields.js';
import { shareView, type ShareView } from '../views/share-view.js';
import { NOT_REQUIRED, shareOptions, type ShareRow } from './share-types.js';
import { completeShare, endProcess, loadDocumentForUpdate, mailOwner } from './workflow.js';
import type { DocumentRow } from '../access/document-access.js';
import type { Database } from '../../store/db/schema.js';
import { QueryTemplate } from '../../store/db/query-template.js';

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

/** A shared document with what its view shows, and its sharer's name: one statement. */
const sharedDocument = new QueryTemplate(
  (db, p: { documentId: string; sharedBy: string; delegatedFrom: string }) =>
    withViewParts(db, db.selectFrom('documents as d'))
      .selectAll('d')
      .select((eb) => [
        eb.selectFrom('users').select('users.name').where('users.id', '=', p.sharedBy).as('sharer_name'),
        eb
          .selectFrom('users')
          .select('users.display_name')
          .where('users.id', '=', p.sharedBy)
          .as('sharer_display_name'),
        // Who passed a delegated share on (issue 25: "the delegate sees who passed it on").
        eb
          .selectFrom('shares')
          .select('shares.share_to')
          .where('shares.id', '=', p.delegatedFrom)
          .as('delegated_by'),
      ])
      .where('d.id', '=', p.documentId),
);

/**
 * GET /share/document (Contract): the recipient's document, answered like GET /documents/:id; the
 * first read marks the private message read. Attachments show to external recipients only when public.
 * `signatureFields` are the fields of the caller's share, imported custom fields prefilled. Two
 * statements: the caller's share, then the document with all its answer shows.
 */
export async function getSharedDocument(
  deps: Deps,
  caller: RecipientCaller,
  documentId?: string,
): Promise<DocumentView & { signatureFields: SignatureFieldView[]; share: ShareView }> {
  const share = await loadCallerShare(
    deps,
    caller,
    documentId ?? (caller.kind === 'external' ? caller.recipient.documentId : undefined),
  );
  if (share.message_read === 0) {
    await deps.db.updateTable('shares').set({ message_read: 1 }).where('id', '=', share.id).execute();
  }
  const [doc] = await sharedDocument.execute(deps.db, {
    documentId: share.document_id,
    sharedBy: share.shared_by,
    delegatedFrom: share.delegated_from ?? '',
  });
  if (!doc) throw new NotFound('No such document');
  const signatureFields = showShareFields(
    shareOptions(share).signatureFields,
    readJson<CustomField[]>(doc.custom_fields, []),
  );
  // The caller's own share (purpose, status, rights, language, message, protections): what a signing
  // page needs to know what to offer.
  const own = shareView(
    share,
    {
      sharedByName: doc.sharer_name ?? undefined,
      sharedByDisplayName: doc.sharer_display_name,
      documentType: doc.document_type,
      customFields: doc.custom_fields,
      delegatedBy: doc.delegated_by ?? undefined,
      // An external caller came with one of the share's links (or a session opened from one).
      linkIssued: caller.kind === 'external',
    },
    deps.config.oidcProviders,
  );
  if (caller.kind === 'internal')
    return { ...shapeDocument(caller.actor, doc, doc), signatureFields, share: own };
  const view = shapeDocument(recipientViewer(share), doc, doc);
  return {
    ...view,
    file: (view.file ?? []).filter((f) => f.public),
    signatureFields,
    share: own,
  };
}

/** The view rights of an external recipient: they see public attachments, nothing of the sharer's account. */
function recipientViewer(share: ShareRow) {
  return {
    userId: `share:${share.id}`,
    name: share.share_to,
    tenantId: share.tenant_id,
    tenantName: '',
    organizationId: '',
    role: 'read' as const,
    rights: new Set(['view_attachments' as const]),
    tokenId: share.id,
    tokenKind: 'session' as const,
    unlocked: true,
    requestId: '',
  };
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
  });
}
