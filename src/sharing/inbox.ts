import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { shareView, type ShareView } from '../core/views/share-view.js';
import { QueryTemplate } from '../store/db/query-template.js';

/** Most pending actions an inbox lists. */
const INBOX_LIMIT = 500;

/** Which of the caller's shares an inbox lists: those still owing something, or those they acted on. */
export type InboxState = 'pending' | 'done';

/**
 * The caller's shares in one state, with their document and sharer: one statement, read when asked (a
 * share revoked a moment before is gone from it). Pending: owing an action, their turn or not, newest
 * share first. Done: acted on (signed, approved, ...), the latest action first, so a user finds the
 * documents they signed, completed ones among them, and downloads them.
 */
const inboxQuery = (statuses: string[], order: 'shares.created_at' | 'shares.acted_at') =>
  new QueryTemplate((db, p: { userId: string }) =>
    db
      .selectFrom('shares')
      .innerJoin('documents', 'documents.id', 'shares.document_id')
      .leftJoin('users as sharer', 'sharer.id', 'shares.shared_by')
      .selectAll('shares')
      .select([
        'documents.title',
        'documents.kind',
        'documents.document_type',
        'documents.custom_fields',
        'documents.share_state',
        'sharer.name as sharer_name',
        'sharer.display_name as sharer_display_name',
      ])
      .where('shares.user_id', '=', p.userId)
      .where('shares.status', 'in', statuses)
      .where('documents.deleted_at', 'is', null)
      .orderBy(order, 'desc')
      .limit(INBOX_LIMIT),
  );

const INBOX_ROWS: Record<InboxState, ReturnType<typeof inboxQuery>> = {
  pending: inboxQuery(['active', 'waiting'], 'shares.created_at'),
  done: inboxQuery(['done'], 'shares.acted_at'),
};

/**
 * GET /inbox: the caller's pending actions (shares to them that owe something, their turn or not);
 * `state: 'done'`, what they acted on, each with its document's share state (`completed`, ...).
 */
export async function listInbox(
  deps: Deps,
  actor: Actor,
  state: InboxState = 'pending',
): Promise<{
  total: number;
  results: (ShareView & { documentTitle: string; documentShareState: string | null })[];
}> {
  const rows = await INBOX_ROWS[state].execute(deps.db, { userId: actor.userId });
  return {
    total: rows.length,
    results: rows.map((row) => ({
      ...shareView(
        row,
        {
          sharedByName: row.sharer_name ?? undefined,
          sharedByDisplayName: row.sharer_display_name,
          documentType: row.document_type,
          kind: row.kind,
          customFields: row.custom_fields,
        },
        deps.config.oidcProviders,
      ),
      documentTitle: row.title,
      documentShareState: row.share_state,
    })),
  };
}
