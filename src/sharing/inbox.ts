import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { shareView, type ShareView } from '../core/views/share-view.js';
import { QueryTemplate } from '../store/db/query-template.js';

/** Most pending actions an inbox lists. */
const INBOX_LIMIT = 500;

/**
 * The caller's shares that owe something, their turn or not, with their document and sharer: one
 * statement, read when asked (a share revoked a moment before is gone from it).
 */
const inboxRows = new QueryTemplate((db, p: { userId: string }) =>
  db
    .selectFrom('shares')
    .innerJoin('documents', 'documents.id', 'shares.document_id')
    .leftJoin('users as sharer', 'sharer.id', 'shares.shared_by')
    .selectAll('shares')
    .select([
      'documents.title',
      'documents.document_type',
      'documents.custom_fields',
      'sharer.name as sharer_name',
    ])
    .where('shares.user_id', '=', p.userId)
    .where('shares.status', 'in', ['active', 'waiting'])
    .where('documents.deleted_at', 'is', null)
    .orderBy('shares.created_at', 'desc')
    .limit(INBOX_LIMIT),
);

/** GET /inbox: the caller's pending actions (shares to them that owe something, their turn or not). */
export async function listInbox(
  deps: Deps,
  actor: Actor,
): Promise<{ total: number; results: (ShareView & { documentTitle: string })[] }> {
  const rows = await inboxRows.execute(deps.db, { userId: actor.userId });
  return {
    total: rows.length,
    results: rows.map((row) => ({
      ...shareView(
        row,
        {
          sharedByName: row.sharer_name ?? undefined,
          documentType: row.document_type,
          customFields: row.custom_fields,
        },
        deps.config.oidcProviders,
      ),
      documentTitle: row.title,
    })),
  };
}
