import type { Static } from 'typebox';
import type { InboxActionBody } from './contract.js';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { NotFound } from '../base/errors.js';
import { executeOwnShare, type ActionOutcome } from './execute-share.js';
import { rejectOwnShare } from './reject-share.js';

/**
 * POST /inbox/action `{shareId, action, reason?, comment?, signatures?, images?, annotations?, level?}`:
 * an internal user acts on a share addressed to them from their inbox, as POST /share/execute and PUT
 * /share/reject do for that share: `sign` (with `signatures`: a PAdES signature in their name),
 * `approve`, `review`, `accept`, `execute` (with visuals, drawn or signed first), or `reject` (visuals
 * with the share right `canAnnotateOnReject`). A share that is not theirs is 404.
 */
export async function actFromInbox(
  deps: Deps,
  actor: Actor,
  options: Static<typeof InboxActionBody>,
): Promise<ActionOutcome> {
  const share = await deps.db
    .selectFrom('shares')
    .selectAll()
    .where('id', '=', options.shareId)
    .where('tenant_id', '=', actor.tenantId)
    .executeTakeFirst();
  if (!share || share.user_id !== actor.userId) throw new NotFound('No such share');
  const caller = { kind: 'internal' as const, actor };
  const { shareId: _shareId, action, reason, comment, level, ...visuals } = options;
  if (action === 'reject') {
    await rejectOwnShare(deps, caller, share, { reason, ...visuals });
    return { status: 'SUCCESS' };
  }
  return executeOwnShare(deps, caller, share, { action, comment, level, ...visuals });
}
