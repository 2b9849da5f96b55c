import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { NotFound, ValidationError } from '../core/errors.js';
import { executeShare, rejectShare } from '../core/sharing/recipient-actions.js';
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

/**
 * POST /inbox/action `{shareId, action, reason?, comment?}`: an internal user acts on a pending share
 * from their inbox: `approve`, `review`, `accept`, `execute` or `reject`. Signing goes through
 * PUT /documents/sign/:version.
 */
export async function inboxAction(
  deps: Deps,
  actor: Actor,
  options: { shareId: string; action: string; reason?: string | undefined; comment?: string | undefined },
): Promise<void> {
  const share = await deps.db
    .selectFrom('shares')
    .select(['document_id', 'user_id'])
    .where('id', '=', options.shareId)
    .where('tenant_id', '=', actor.tenantId)
    .executeTakeFirst();
  if (!share || share.user_id !== actor.userId) throw new NotFound('No such share');
  const caller = { kind: 'internal' as const, actor };
  if (options.action === 'reject')
    return rejectShare(deps, caller, { id: share.document_id, reason: options.reason });
  if (options.action === 'sign') throw new ValidationError('Sign with PUT /documents/sign/:version');
  return executeShare(deps, caller, {
    id: share.document_id,
    action: options.action,
    comment: options.comment,
  });
}
