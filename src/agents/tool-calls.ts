import { createHash } from 'node:crypto';
import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { writeTransaction } from '../store/db/dialect.js';

/** How a tool call ended, as its audit record says. */
export type ToolCallOutcome = 'answered' | 'pending' | 'refused' | 'failed';

/** One MCP tool call, as its audit record `agentToolCall` keeps it. */
export interface ToolCall {
  tool: string;
  arguments: unknown;
  outcome: ToolCallOutcome;
  /** The error code of a refused or failed call. */
  code?: string | undefined;
  /** The document the call was about, when it names one: its embedded audit trail then lists it. */
  documentId?: string | undefined;
  /** The pending action the call created. */
  pendingActionId?: string | undefined;
}

/** SHA-256 (hex) of a request's canonical JSON (keys sorted): the same request, the same digest. */
export function requestDigest(request: unknown): string {
  return createHash('sha256').update(canonicalJson(request)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The public id of the caller's API key (the prefix GET /api/key lists), never the secret. */
export async function keyPrefixOf(deps: Deps, actor: Actor): Promise<string> {
  const row = await deps.db
    .selectFrom('auth_tokens')
    .select('prefix')
    .where('id', '=', actor.tokenId)
    .executeTakeFirst();
  return row?.prefix ?? actor.tokenId;
}

/**
 * Every tool call is evidence (issue 42, Deliver 4): an audit record `agentToolCall` with the key's
 * id, the tool, a digest of the arguments (never the arguments: they may carry a whole PDF or
 * personal data) and the outcome. A call about a document is recorded on that document, so its
 * embedded audit trail lists what the agent did.
 */
export async function recordToolCall(deps: Deps, actor: Actor, call: ToolCall): Promise<void> {
  const keyId = await keyPrefixOf(deps, actor);
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await recordAction(trx, actor, {
      activityType: 'agentToolCall',
      ...(call.documentId === undefined ? {} : { objectType: 'document', objectId: call.documentId }),
      at: deps.clock.now(),
      data: {
        keyId,
        tool: call.tool,
        argumentsDigest: requestDigest(call.arguments),
        outcome: call.outcome,
        ...(call.code === undefined ? {} : { code: call.code }),
        ...(call.pendingActionId === undefined ? {} : { pendingActionId: call.pendingActionId }),
      },
    });
  });
}
