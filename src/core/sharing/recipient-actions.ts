import type { Deps } from '../deps.js';
import type { CustomField } from '../documents/custom-fields.js';
import { documentView, type DocumentView } from '../views/document-view.js';
import { Conflict, Forbidden, NotFound, ValidationError } from '../errors.js';
import { readJson } from '../../store/db/json.js';
import { callerName, callerRequestId, loadCallerShare, type RecipientCaller } from './recipient.js';
import { assertRequiredFilesSubmitted, showShareFields, type SignatureFieldView } from './share-fields.js';
import { shareViews, type ShareView } from '../views/share-view.js';
import { NOT_REQUIRED, shareOptions, type ShareRow } from './share-types.js';
import { completeShare, endProcess, loadDocumentForUpdate, mailOwner } from './workflow.js';
import { writeTransaction } from '../../store/db/dialect.js';

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
 * GET /share/document (Contract): the recipient's document, answered like GET /documents/:id; the
 * first read marks the private message read. Attachments show to external recipients only when public.
 * `signatureFields` are the fields of the caller's share, imported custom fields prefilled.
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
  const doc = await loadDocumentForUpdate(deps.db, share.document_id);
  const signatureFields = showShareFields(
    shareOptions(share).signatureFields,
    readJson<CustomField[]>(doc.custom_fields, []),
  );
  // The caller's own share (purpose, status, rights, language, message, protections): what a signing
  // page needs to know what to offer.
  const [own] = await shareViews(deps.db, [share], deps.config.oidcProviders);
  if (!own) throw new NotFound('No such share');
  if (caller.kind === 'internal')
    return { ...(await documentView(deps.db, caller.actor, doc)), signatureFields, share: own };
  const view = await documentView(deps.db, recipientViewer(share), doc);
  const publicIds = new Set(
    (
      await deps.db
        .selectFrom('document_attachments')
        .select('file_id')
        .where('document_id', '=', doc.id)
        .where('is_public', '=', 1)
        .execute()
    ).map((a) => a.file_id),
  );
  return {
    ...view,
    file: (view.file ?? []).filter((f) => publicIds.has(f.content)),
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

/** PUT /share/reject (Contract: `{id, reason?}`): the recipient refuses; the document becomes `rejected`. */
export async function rejectShare(
  deps: Deps,
  caller: RecipientCaller,
  options: { id: string; reason?: string | undefined },
) {
  const share = await loadCallerShare(deps, caller, options.id);
  const now = deps.clock.now();
  assertShareCanAct(share, now);
  const rejecter = by(caller, share.tenant_id);
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const doc = await loadDocumentForUpdate(trx, share.document_id);
    await endProcess(trx, {
      doc,
      state: 'rejected',
      by: rejecter,
      now,
      reason: options.reason,
      cause: share,
    });
    await mailOwner(trx, doc, rejecter, now, {
      kind: 'rejected',
      from: share.share_to,
      note: options.reason,
    });
  });
}

const SIMPLE_ACTIONS = ['approve', 'review', 'accept', 'execute'];

/**
 * POST /share/execute `{id, action?, comment?}`: records an approve, review, accept or execute action
 * (`documentSimpleActionExecuted`) and passes the turn on. Signing goes through the sign endpoints.
 */
export async function executeShare(
  deps: Deps,
  caller: RecipientCaller,
  options: { id: string; action?: string | undefined; comment?: string | undefined },
) {
  const share = await loadCallerShare(deps, caller, options.id);
  const now = deps.clock.now();
  assertShareCanAct(share, now);
  if (!SIMPLE_ACTIONS.includes(share.purpose)) {
    throw new ValidationError(
      `This share is for ${share.purpose}: use the ${share.purpose === 'sign' ? 'sign endpoint' : 'document'} instead`,
    );
  }
  if (options.action && options.action !== share.purpose) {
    throw new Forbidden(`This share allows ${share.purpose}, not ${options.action}`);
  }
  await assertRequiredFilesSubmitted(deps.db, share);
  await writeTransaction(deps.db, deps.dialect, (trx) =>
    completeShare(trx, deps, {
      share,
      by: by(caller, share.tenant_id),
      now,
      event: 'documentSimpleActionExecuted',
      activityType: `document${share.purpose[0]?.toUpperCase()}${share.purpose.slice(1)}d`,
      data: { comment: options.comment ?? null },
    }),
  );
}
