import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Type } from 'typebox';
import { appError, Forbidden } from '../../base/errors.js';
import type { Deps } from '../../core/deps.js';
import { mcpServer } from '../../mcp/mcp-server.js';
import { invalidParams } from '../../mcp/request-check.js';
import { actorOf } from '../authentication.js';
import { withErrors } from '../schemas.js';
import { withSecurityHeaders } from '../answers.js';

/** GET and DELETE /mcp: this server keeps no session and opens no stream of its own (stateless). */
class MethodNotAllowed extends appError(405, 'METHOD_NOT_ALLOWED') {}

export const MCP_PATH = '/mcp';

const MCP_DESCRIPTION =
  'The Model Context Protocol server for AI agents (Streamable HTTP, stateless: one JSON-RPC message per POST, answered as JSON). Authenticated by an API key only (`Authorization: Bearer <key>`; a session is 403), with the key’s rights and rate limit: every tool call is one request and counts. Tools: find_documents, get_document, upload_pdf, create_document, place_fields, prepare_share, send_reminder, verify_document, download_signed_pdf, list_events. prepare_share and send_reminder never act: they create a pending action a person approves (GET /api/v1/agent-actions). A read-only key is refused every write tool. Every call is an audit record `agentToolCall` (key id, tool, SHA-256 of the arguments, outcome). A request with an `Origin` other than PUBLIC_URL’s or one of MCP_ALLOWED_ORIGINS is 403 (DNS rebinding, MCP specification: Security).';

/**
 * The MCP specification's security rules for Streamable HTTP: a request carrying an `Origin` that is
 * not ours (PUBLIC_URL) nor one the operator allowed is refused with 403, so a web page the user
 * visits cannot reach the server through their browser (DNS rebinding). Clients that are not
 * browsers send no Origin. An allowed origin is answered CORS headers; any other none.
 */
function originGuard(allowed: ReadonlySet<string>) {
  return (request: FastifyRequest, reply: FastifyReply): void => {
    const origin = request.headers.origin;
    if (origin === undefined) return;
    if (!allowed.has(origin)) throw new Forbidden('This origin may not call /mcp (MCP_ALLOWED_ORIGINS)');
    void reply.header('access-control-allow-origin', origin);
    void reply.header('vary', 'Origin');
  };
}

/** POST /mcp: the MCP server (src/mcp/), as Streamable HTTP on the API's port (issue 42). */
export function mcpRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  const allowed = new Set([new URL(deps.config.publicUrl).origin, ...deps.config.mcpAllowedOrigins]);
  const guard = originGuard(allowed);
  return async (app) => {
    app.post(
      MCP_PATH,
      {
        // An agent's key and a read-only key may POST here: the tools hold what each may do.
        config: { agentEndpoint: true },
        // Every caller's origin is checked, whoever they are.
        onRequest: async (request, reply) => guard(request, reply),
        schema: {
          operationId: 'sendMcpMessage',
          tags: ['agents'],
          summary: 'MCP server for AI agents (JSON-RPC)',
          description: MCP_DESCRIPTION,
          body: Type.Object(
            { jsonrpc: Type.Literal('2.0'), method: Type.Optional(Type.String()) },
            { additionalProperties: true, examples: [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }] },
          ),
          response: withErrors({
            200: Type.Unknown({
              description: 'The JSON-RPC answer.',
              examples: [
                {
                  jsonrpc: '2.0',
                  id: 1,
                  result: { tools: [{ name: 'find_documents', inputSchema: { type: 'object' } }] },
                },
              ],
            }),
          }),
        },
      },
      async (request, reply) => {
        const actor = actorOf(request);
        if (actor.tokenKind !== 'api_key')
          throw new Forbidden('/mcp takes an API key (POST /api/key, with `agent: true` for an agent)');
        // Invalid params are the client's mistake, said as one (the SDK would call them an internal error).
        const invalid = invalidParams(request.body);
        if (invalid) return invalid;
        const server = mcpServer(deps, actor);
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        // The transport writes the answer itself, past the onSend hook: what the hooks set (rate limit
        // fields, CORS), the security headers and the request id go with it.
        withSecurityHeaders(reply);
        void reply.header('x-request-id', request.id);
        for (const [name, value] of Object.entries(reply.getHeaders()))
          if (value !== undefined) reply.raw.setHeader(name, value);
        reply.hijack();
        reply.raw.on('close', () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(request.raw, reply.raw, request.body);
      },
    );

    for (const method of ['GET', 'DELETE'] as const) {
      app.route({
        method,
        url: MCP_PATH,
        config: { auth: 'none' },
        onRequest: async (request, reply) => guard(request, reply),
        schema: { hide: true },
        handler: async (_request, reply) => {
          void reply.header('allow', 'POST');
          throw new MethodNotAllowed('/mcp keeps no session and opens no event stream: POST each message');
        },
      });
    }
  };
}
