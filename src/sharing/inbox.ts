import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { shareViews, type ShareView } from '../core/views/share-view.js';

/** GET /inbox: the caller's pending actions (shares to them that owe something, their turn or not). */
export async function listInbox(
  deps: Deps,
  actor: Actor,
): Promise<{ total: number; results: (ShareView & { documentTitle: string })[] }> {
  const rows = await deps.db
    .selectFrom('shares')
    .innerJoin('documents', 'documents.id', 'shares.document_id')
    .selectAll('shares')
    .select('documents.title')
    .where('shares.user_id', '=', actor.userId)
    .where('shares.status', 'in', ['active', 'waiting'])
    .where('documents.deleted_at', 'is', null)
    .orderBy('shares.created_at', 'desc')
    .limit(500)
    .execute();
  const views = await shareViews(deps.db, rows, deps.config.oidcProviders);
  return {
    total: views.length,
    results: views.map((v, i) => ({ ...v, documentTitle: rows[i]?.title ?? '' })),
  };
}
