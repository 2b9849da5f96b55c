import type { Kysely } from 'kysely';
import type { DocumentRow } from '../access/document-access.js';
import type { DocumentChanger } from '../changes/change-document.js';
import type { Database } from '../../store/db/schema.js';
import { PENDING } from './share-types.js';
import { endProcess } from './workflow.js';

/** The reason a share ended because its document was deleted (shares' `reason`, the audit record's). */
export const DOCUMENT_DELETED = 'document deleted';

/**
 * A document is deleted (DESIGN: "a soft delete ends its shares"): its process, when in progress, is
 * `cancelled` (spec: "the process was cancelled by the document owner", who or whose administrator
 * deletes it), every share still active or waiting ends `cancelled`, and every credential derived from
 * a share ends with it: the link (its token hash goes), recipient sessions and identity-provider
 * sign-ins under way. Runs in the deletion's transaction; answers the document as it now is.
 */
export async function endDocumentShares(
  trx: Kysely<Database>,
  options: { doc: DocumentRow; by: DocumentChanger; now: Date },
): Promise<DocumentRow> {
  const { by, now } = options;
  let doc = options.doc;
  if (doc.share_state === 'inprogress') {
    doc = await endProcess(trx, { doc, state: 'cancelled', by, now, reason: DOCUMENT_DELETED });
  }
  await trx
    .updateTable('shares')
    .set({
      status: 'cancelled',
      reason: DOCUMENT_DELETED,
      next_reminder_at: null,
      updated_at: now.toISOString(),
    })
    .where('document_id', '=', doc.id)
    .where('status', 'in', [...PENDING])
    .execute();
  const shares = trx.selectFrom('shares').select('id').where('document_id', '=', doc.id);
  // Every link the recipients were sent (core/sharing/share-links.ts), and every session they opened.
  await trx.deleteFrom('share_links').where('share_id', 'in', shares).execute();
  await trx.deleteFrom('recipient_sessions').where('share_id', 'in', shares).execute();
  await trx.deleteFrom('share_oidc_states').where('share_id', 'in', shares).execute();
  return doc;
}
