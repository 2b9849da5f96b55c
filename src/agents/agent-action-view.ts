import type { Selectable } from 'kysely';
import type { AgentActionTable } from '../store/db/schema.js';
import { readJson } from '../store/db/json.js';
import type { AGENT_ACTION_STATES } from './contract.js';

export type AgentActionRow = Selectable<AgentActionTable>;
export type AgentActionState = (typeof AGENT_ACTION_STATES)[number];

/** An agent action as GET /agent-actions lists it (DESIGN, Agents), with what a person decides on. */
export interface AgentActionView {
  id: string;
  tool: string;
  state: AgentActionState;
  documentId: string;
  /** The login name of the user whose key proposed it. */
  createdBy: string;
  createdAt: string;
  /** The public id (prefix) of the API key that proposed it. */
  keyId: string;
  expiresAt: string;
  /** The exact request that approval executes. */
  request: unknown;
  decidedBy: string | null;
  decidedAt: string | null;
  outcome: unknown;
}

/** A pending action past its time is `expired`: it can no longer be approved. */
export function stateOf(row: Pick<AgentActionRow, 'state' | 'expires_at'>, now: Date): AgentActionState {
  return row.state === 'pending' && new Date(row.expires_at) <= now ? 'expired' : row.state;
}

export function agentActionView(row: AgentActionRow, now: Date): AgentActionView {
  return {
    id: row.id,
    tool: row.tool,
    state: stateOf(row, now),
    documentId: row.document_id,
    createdBy: row.created_by,
    createdAt: new Date(row.created_at).toISOString(),
    keyId: row.key_prefix,
    expiresAt: new Date(row.expires_at).toISOString(),
    request: readJson<unknown>(row.request, null),
    decidedBy: row.decided_by,
    decidedAt: row.decided_at === null ? null : new Date(row.decided_at).toISOString(),
    outcome: readJson<unknown>(row.outcome, null),
  };
}
