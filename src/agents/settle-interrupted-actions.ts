import { record } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { recordFeedEvent } from '../core/events/feed-event.js';
import { writeTransaction } from '../store/db/dialect.js';

/**
 * How long an approved act may run before it counts as interrupted: far beyond any request's time
 * (an act is one request's work), so only a node that died mid-act leaves one this old.
 */
export const INTERRUPTED_AFTER_MS = 15 * 60_000;
const BATCH = 100;

/**
 * Approval claims an action (`executing`) and then runs the act in the approver's request; a node that
 * dies in between leaves it `executing` for ever, and the agent waiting on the feed never hears. This
 * sweep (every five minutes, src/app.ts) ends such an action as `interrupted`: whether the act took
 * effect is not known (a share may or may not have been made), so the state says exactly that, with
 * an audit record `agentActionInterrupted` and its feed event; the person reads the document and the
 * agent proposes again if needed. It is never set back to pending: approving it again could do the
 * act twice.
 */
export async function settleInterruptedActions(deps: Deps, now: Date): Promise<number> {
  const before = new Date(now.getTime() - INTERRUPTED_AFTER_MS).toISOString();
  const stuck = await deps.db
    .selectFrom('agent_actions')
    .selectAll()
    .where('state', '=', 'executing')
    .where('decided_at', '<', before)
    .orderBy('decided_at')
    .limit(BATCH)
    .execute();
  let settled = 0;
  for (const action of stuck) {
    await writeTransaction(deps.db, deps.dialect, async (trx) => {
      const ended = await trx
        .updateTable('agent_actions')
        .set({ state: 'interrupted' })
        .where('id', '=', action.id)
        .where('state', '=', 'executing')
        .executeTakeFirst();
      if (Number(ended.numUpdatedRows) === 0) return;
      await record(trx, {
        tenantId: action.tenant_id,
        actorId: 'system',
        requestId: 'scheduler',
        activityType: 'agentActionInterrupted',
        objectType: 'document',
        objectId: action.document_id,
        at: now,
        data: {
          actionId: action.id,
          tool: action.tool,
          keyId: action.key_prefix,
          approvedBy: action.decided_by,
        },
      });
      await recordFeedEvent(trx, {
        tenantId: action.tenant_id,
        organizationId: action.organization_id,
        documentId: action.document_id,
        event: 'agentActionInterrupted',
        actor: 'system',
        at: now,
      });
      settled++;
    });
  }
  return settled;
}
