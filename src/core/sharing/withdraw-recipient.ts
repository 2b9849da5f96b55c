import type { Kysely } from 'kysely';
import { record } from '../audit/record.js';
import type { Deps } from '../deps.js';
import type { DocumentChanger } from '../changes/change-document.js';
import type { Database } from '../../store/db/schema.js';
import { PENDING } from './share-types.js';
import { advanceWorkflow, loadDocumentForUpdate } from './workflow.js';

/**
 * A user who owes actions is deleted (DELETE /users/:id): they can never act, so their pending shares
 * end (`cancelled`, reason `recipient deleted`), leave `waitingFor`, get no more reminders, and each
 * document's workflow moves on without them (the next turn of a sequence, or completion when no other
 * mandatory action is pending). Runs in the deletion's transaction; the audit names each share.
 */
export async function withdrawDeletedUser(
  trx: Kysely<Database>,
  deps: Deps,
  options: { userId: string; by: DocumentChanger; now: Date },
): Promise<void> {
  const { by, now } = options;
  const shares = await trx
    .selectFrom('shares')
    .selectAll()
    .where('user_id', '=', options.userId)
    .where('status', 'in', [...PENDING])
    .execute();
  if (shares.length === 0) return;
  await trx
    .updateTable('shares')
    .set({
      status: 'cancelled',
      reason: 'recipient deleted',
      next_reminder_at: null,
      updated_at: now.toISOString(),
    })
    .where(
      'id',
      'in',
      shares.map((s) => s.id),
    )
    .execute();
  for (const documentId of new Set(shares.map((s) => s.document_id))) {
    const doc = await loadDocumentForUpdate(trx, documentId);
    for (const share of shares.filter((s) => s.document_id === documentId)) {
      await record(trx, {
        tenantId: doc.tenant_id,
        actorId: by.name,
        activityType: 'shareRecipientRemoved',
        objectType: doc.kind,
        objectId: doc.id,
        requestId: by.requestId,
        data: {
          shareId: share.id,
          shareTo: share.share_to,
          purpose: share.purpose,
          reason: 'recipient deleted',
        },
        at: now,
      });
    }
    await advanceWorkflow(trx, deps, { doc, by, now });
  }
}
