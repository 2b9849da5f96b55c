import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { recordFeedEvent } from '../core/events/feed-event.js';
import { Conflict } from '../base/errors.js';
import { writeTransaction } from '../store/db/dialect.js';
import { writeJson } from '../store/db/json.js';
import { assertDecidingPerson, loadReachableAction } from './agent-action-access.js';
import { agentActionView, stateOf, type AgentActionView } from './agent-action-view.js';

/**
 * POST /agent-actions/:id/reject (issue 42, Deliver 3): a person turns down what an agent proposed;
 * nothing of it is done. Load → a person decides → only a pending action (an expired one needs no
 * answer) → rejected with its audit record and feed event, so the waiting agent learns it.
 */
export async function rejectAgentAction(
  deps: Deps,
  actor: Actor,
  options: { id: string; reason?: string | undefined },
): Promise<AgentActionView> {
  const action = await loadReachableAction(deps.db, actor, options.id);
  assertDecidingPerson(actor, action);
  const now = deps.clock.now();
  const state = stateOf(action, now);
  if (state !== 'pending') throw new Conflict(`This agent action is ${state}, no longer pending`);
  const outcome = options.reason === undefined ? null : { reason: options.reason };
  const done = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const decided = await trx
      .updateTable('agent_actions')
      .set({
        state: 'rejected',
        decided_by: actor.name,
        decided_at: now.toISOString(),
        outcome: writeJson(outcome),
      })
      .where('id', '=', action.id)
      .where('state', '=', 'pending')
      .executeTakeFirst();
    if (decided.numUpdatedRows === 0n) throw new Conflict('This agent action was decided meanwhile');
    await recordAction(trx, actor, {
      activityType: 'agentActionRejected',
      objectType: 'document',
      objectId: action.document_id,
      at: now,
      data: {
        actionId: action.id,
        tool: action.tool,
        keyId: action.key_prefix,
        proposedBy: action.created_by,
      },
    });
    await recordFeedEvent(trx, {
      tenantId: action.tenant_id,
      organizationId: action.organization_id,
      documentId: action.document_id,
      event: 'agentActionRejected',
      actor: actor.name,
      at: now,
    });
    return trx.selectFrom('agent_actions').selectAll().where('id', '=', action.id).executeTakeFirstOrThrow();
  });
  return agentActionView(done, now);
}
