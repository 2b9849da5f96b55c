import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { loadReachableAction } from './agent-action-access.js';
import { agentActionView, type AgentActionView } from './agent-action-view.js';

/**
 * GET /agent-actions/:id: one agent action the caller reaches (agent-action-access.ts), with the exact
 * request approval would execute: what the approval page, opened from the mail to the key's owner,
 * shows before a person decides. Any other is "not found".
 */
export async function getAgentAction(deps: Deps, actor: Actor, id: string): Promise<AgentActionView> {
  return agentActionView(await loadReachableAction(deps.db, actor, id), deps.clock.now());
}
