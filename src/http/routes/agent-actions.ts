import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { approveAgentAction, type ExecuteAct } from '../../agents/approve-agent-action.js';
import { listAgentActions } from '../../agents/list-agent-actions.js';
import { rejectAgentAction } from '../../agents/reject-agent-action.js';
import {
  AGENT_ACTION_STATES,
  AgentActionParams,
  AgentActionsQuery,
  RejectAgentActionBody,
} from '../../agents/contract.js';
import { getAgentAction } from '../../agents/get-agent-action.js';
import { actorOf } from '../authentication.js';
import { withErrors } from '../schemas.js';

const AGENT_ACTION_EXAMPLE = {
  id: '0b5e7c1a-3f2d-4e8b-9a6c-1d2e3f4a5b6c',
  tool: 'prepare_share',
  state: 'pending',
  documentId: '5e8d2c4b7a1f3e6d9c0b2a4f6e8d1c3b',
  createdBy: 'jane@example.com',
  createdAt: '2026-03-01T08:00:00.000Z',
  keyId: 'sgy_3f9a1c07be42',
  expiresAt: '2026-03-04T08:00:00.000Z',
  request: {
    documentId: '5e8d2c4b7a1f3e6d9c0b2a4f6e8d1c3b',
    data: [{ shareTo: 'client@example.org', sharePurpose: 'sign' }],
  },
  decidedBy: null,
  decidedAt: null,
  outcome: null,
};

const AgentAction = Type.Object(
  {
    id: Type.String(),
    tool: Type.String({ description: 'The MCP tool that proposed it (prepare_share, send_reminder).' }),
    state: Type.Enum([...AGENT_ACTION_STATES], {
      description:
        '`pending` until a person approves (`executing`, then `executed`) or rejects it (`rejected`); `expired` once AGENT_ACTION_TTL_HOURS passed without a decision; `interrupted` when an approved act did not finish (its node stopped): it may or may not have taken effect, so read the document before proposing it again.',
    }),
    documentId: Type.String(),
    createdBy: Type.String({ description: 'Login name of the user whose API key proposed it.' }),
    createdAt: Type.String(),
    keyId: Type.String({ description: 'The public id of the API key that proposed it.' }),
    expiresAt: Type.String(),
    request: Type.Unknown({ description: 'The exact request approval executes.' }),
    decidedBy: Type.Union([Type.String(), Type.Null()]),
    decidedAt: Type.Union([Type.String(), Type.Null()]),
    outcome: Type.Unknown({
      description: 'What the act answered once executed, or the reason of a rejection.',
    }),
  },
  { examples: [AGENT_ACTION_EXAMPLE] },
);

const APPROVAL_RULES =
  'A person decides: an agent’s API key (POST /api/key `agent`), a read-only key and the key that proposed the action are refused (403 FORBIDDEN). An action the caller does not reach is 404: they reach the actions their own keys proposed, those on documents they own, and, as administrators, those of their organization (global and super administrators: the tenant’s). Only a pending action is decided (409 CONFLICT otherwise, an expired one included).';

/** What AI agents proposed through /mcp, for a person to approve or reject (issue 42). */
export function agentActionRoutes(deps: Deps, execute: ExecuteAct): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/agent-actions',
      {
        schema: {
          operationId: 'listAgentActions',
          tags: ['agents'],
          summary: 'List what agents proposed',
          description: `The agent actions the caller reaches, newest first: each is a consequential act (share, remind) an AI agent asked for through /mcp, waiting for a person or decided. ${APPROVAL_RULES}`,
          querystring: AgentActionsQuery,
          response: withErrors({
            200: Type.Object(
              { results: Type.Array(AgentAction) },
              { examples: [{ results: [AGENT_ACTION_EXAMPLE] }] },
            ),
          }),
        },
      },
      async (request) => listAgentActions(deps, actorOf(request), request.query),
    );

    app.get(
      '/agent-actions/:id',
      {
        schema: {
          operationId: 'getAgentAction',
          tags: ['agents'],
          summary: 'Read what an agent proposed',
          description: `One agent action with the exact request approval would execute (\`request\`): what a person reads before deciding. The mail sent to the key’s owner when an agent proposes an act links to PUBLIC_URL/approve/{id}, a page that shows it and approves or rejects it once the person has signed in (the link carries no credential). ${APPROVAL_RULES}`,
          params: AgentActionParams,
          response: withErrors({ 200: AgentAction }),
        },
      },
      async (request) => getAgentAction(deps, actorOf(request), request.params.id),
    );

    app.post(
      '/agent-actions/:id/approve',
      {
        schema: {
          operationId: 'approveAgentAction',
          tags: ['agents'],
          summary: 'Approve what an agent proposed, and do it',
          description: `Executes the action’s exact request as the caller (the approver is the actor of the act and its audit records; the audit record \`agentActionApproved\` names the agent’s key), with the caller’s rights: a caller who may not do the act gets its error and the action stays pending. ${APPROVAL_RULES} Answers the action, \`executed\`, with the act’s answer as \`outcome\`.`,
          params: AgentActionParams,
          response: withErrors({ 200: AgentAction, 409: Type.Ref('ErrorBody') }),
        },
      },
      async (request) => approveAgentAction(deps, actorOf(request), { id: request.params.id, execute }),
    );

    app.post(
      '/agent-actions/:id/reject',
      {
        schema: {
          operationId: 'rejectAgentAction',
          tags: ['agents'],
          summary: 'Reject what an agent proposed',
          description: `Nothing of the action is done; \`reason\` is kept as its \`outcome\` for the agent. ${APPROVAL_RULES}`,
          params: AgentActionParams,
          body: RejectAgentActionBody,
          response: withErrors({ 200: AgentAction, 409: Type.Ref('ErrorBody') }),
        },
      },
      async (request) =>
        rejectAgentAction(deps, actorOf(request), { id: request.params.id, reason: request.body?.reason }),
    );
  };
}
