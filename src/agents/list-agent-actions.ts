import type { Static } from 'typebox';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import type { AgentActionsQuery } from './contract.js';
import { reachableActions } from './agent-action-access.js';
import { agentActionView, type AgentActionView } from './agent-action-view.js';

/**
 * GET /agent-actions: the agent actions the caller reaches (agent-action-access.ts), newest first,
 * so a person sees what waits for them. `expired` is a pending action past its time.
 */
export async function listAgentActions(
  deps: Deps,
  actor: Actor,
  query: Static<typeof AgentActionsQuery>,
): Promise<{ results: AgentActionView[] }> {
  const now = deps.clock.now();
  let rows = reachableActions(deps.db, actor);
  if (query.documentId !== undefined) rows = rows.where('a.document_id', '=', query.documentId);
  if (query.state === 'expired' || query.state === 'pending') {
    rows = rows
      .where('a.state', '=', 'pending')
      .where('a.expires_at', query.state === 'expired' ? '<=' : '>', now.toISOString());
  } else if (query.state !== undefined) rows = rows.where('a.state', '=', query.state);
  const found = await rows
    .orderBy('a.created_at', 'desc')
    .orderBy('a.id')
    .limit(query.size ?? 50)
    .execute();
  return { results: found.map((row) => agentActionView(row, now)) };
}
