import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { recordFeedEvent } from '../core/events/feed-event.js';
import { AppError, Conflict } from '../base/errors.js';
import { writeTransaction } from '../store/db/dialect.js';
import { readJson, writeJson } from '../store/db/json.js';
import { assertDecidingPerson, loadReachableAction } from './agent-action-access.js';
import { agentActionView, stateOf, type AgentActionView } from './agent-action-view.js';
import { requestDigest } from './tool-calls.js';

/**
 * Runs an approved act: the tool's use case called with the approver as actor. The composition
 * supplies it (src/mcp/acts.ts), since the acts belong to other capabilities.
 */
export type ExecuteAct = (tool: string, request: unknown, actor: Actor) => Promise<unknown>;

/**
 * POST /agent-actions/:id/approve (issue 42, Deliver 3). Load (an action the caller does not reach is
 * "not found") → a person decides (never an agent's key, nor the key that proposed it) → only a
 * pending action that has not expired → claim it (pending → executing, compare-and-set, with the
 * audit record `agentActionApproved` naming the agent's key: the trail reads "approved by", then the
 * act) → the act itself, with the approver as actor, so its own rules decide whether the approver
 * holds the right to do it → executed, with its feed event. An act that fails leaves the action
 * pending again (audit `agentActionFailed`), and the error is answered.
 */
export async function approveAgentAction(
  deps: Deps,
  actor: Actor,
  options: { id: string; execute: ExecuteAct },
): Promise<AgentActionView> {
  const action = await loadReachableAction(deps.db, actor, options.id);
  assertDecidingPerson(actor, action);
  const now = deps.clock.now();
  const state = stateOf(action, now);
  if (state === 'expired')
    throw new Conflict(
      `This agent action expired at ${new Date(action.expires_at).toISOString()}: ask the agent again`,
    );
  if (state !== 'pending') throw new Conflict(`This agent action is ${state}, no longer pending`);
  const request = readJson<unknown>(action.request, null);
  const audited = {
    objectType: 'document',
    objectId: action.document_id,
    data: {
      actionId: action.id,
      tool: action.tool,
      keyId: action.key_prefix,
      proposedBy: action.created_by,
      requestDigest: requestDigest(request),
    },
  };
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const claimed = await trx
      .updateTable('agent_actions')
      .set({ state: 'executing', decided_by: actor.name, decided_at: now.toISOString() })
      .where('id', '=', action.id)
      .where('state', '=', 'pending')
      .where('expires_at', '>', now.toISOString())
      .executeTakeFirst();
    if (claimed.numUpdatedRows === 0n) throw new Conflict('This agent action was decided meanwhile');
    await recordAction(trx, actor, { activityType: 'agentActionApproved', at: now, ...audited });
  });
  let outcome: unknown;
  try {
    outcome = await options.execute(action.tool, request, actor);
  } catch (error) {
    await writeTransaction(deps.db, deps.dialect, async (trx) => {
      await trx
        .updateTable('agent_actions')
        .set({ state: 'pending', decided_by: null, decided_at: null })
        .where('id', '=', action.id)
        .execute();
      await recordAction(trx, actor, {
        activityType: 'agentActionFailed',
        at: deps.clock.now(),
        ...audited,
        data: { ...audited.data, code: error instanceof AppError ? error.code : 'INTERNAL_ERROR' },
      });
    });
    throw error;
  }
  const done = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await trx
      .updateTable('agent_actions')
      .set({ state: 'executed', outcome: writeJson(outcome ?? null) })
      .where('id', '=', action.id)
      .execute();
    await recordFeedEvent(trx, {
      tenantId: action.tenant_id,
      organizationId: action.organization_id,
      documentId: action.document_id,
      event: 'agentActionApproved',
      actor: actor.name,
      at: deps.clock.now(),
    });
    return trx.selectFrom('agent_actions').selectAll().where('id', '=', action.id).executeTakeFirstOrThrow();
  });
  return agentActionView(done, deps.clock.now());
}
