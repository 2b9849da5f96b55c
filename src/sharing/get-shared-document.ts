import type { Deps } from '../core/deps.js';
import type { CustomField } from '../core/documents/custom-fields.js';
import { shapeDocument, withViewParts, type DocumentView } from '../core/views/document-view.js';
import { NotFound } from '../base/errors.js';
import { readJson } from '../store/db/json.js';
import { loadCallerShare } from '../core/sharing/recipient.js';
import type { RecipientCaller } from '../core/access/recipient-caller.js';
import { showShareFields, type SignatureFieldView } from '../core/sharing/share-fields.js';
import { shareView, type ShareView } from '../core/views/share-view.js';
import { shareOptions, type ShareRow } from '../core/sharing/share-types.js';
import { QueryTemplate } from '../store/db/query-template.js';
import type { ConsentStatement } from '../core/sharing/consent-statement.js';
import { consentOfShare } from './accept-consent.js';

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
): Promise<
  DocumentView & { signatureFields: SignatureFieldView[]; share: ShareView; consent: ConsentStatement }
> {
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
  // The statement the recipient accepts before signing (POST /share/consent names it by its hash).
  const consent = await consentOfShare(deps, share);
  if (caller.kind === 'internal')
    return { ...shapeDocument(caller.actor, doc, doc), signatureFields, share: own, consent };
  const view = shapeDocument(recipientViewer(share), doc, doc);
  return {
    ...view,
    file: (view.file ?? []).filter((f) => f.public),
    signatureFields,
    share: own,
    consent,
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
