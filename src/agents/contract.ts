import { Type } from 'typebox';
import { Id } from '../core/common-contract.js';
import { DocumentId } from '../core/documents/document-contract.js';

/**
 * What the agent-action calls take (issue 42): the schemas the routes check requests against, from
 * which the use cases' input types are made (`Static<>`).
 */

/**
 * The states an agent action is listed in: `expired` is a pending action whose time ran out;
 * `interrupted` an approved one whose act did not finish (its node stopped: it may or may not have
 * taken effect; settle-interrupted-actions.ts).
 */
export const AGENT_ACTION_STATES = [
  'pending',
  'executing',
  'executed',
  'rejected',
  'expired',
  'interrupted',
] as const;

/** The query of GET /agent-actions. */
export const AgentActionsQuery = Type.Object(
  {
    state: Type.Optional(
      Type.Enum([...AGENT_ACTION_STATES], { description: 'Only the actions in this state (default: all).' }),
    ),
    documentId: Type.Optional(DocumentId),
    size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  },
  { additionalProperties: false, examples: [{ state: 'pending' }] },
);

/** The path of POST /agent-actions/{id}/approve and /reject. */
export const AgentActionParams = Type.Object({ id: Id });

/** The body of POST /agent-actions/{id}/reject (optional). */
export const RejectAgentActionBody = Type.Optional(
  Type.Object(
    { reason: Type.Optional(Type.String({ maxLength: 1000, description: 'Told to the agent.' })) },
    { additionalProperties: false, examples: [{ reason: 'Not this client; wait for the signed NDA.' }] },
  ),
);
