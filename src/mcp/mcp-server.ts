import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { recordToolCall } from '../agents/tool-calls.js';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { AppError, Forbidden, ValidationError } from '../base/errors.js';
import { getDocument } from '../documents/get-document.js';
import { agentTools, type AgentTool } from './tools.js';

// ajv-formats is CommonJS with its function on `default`.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** The version this server reports to MCP clients. */
export const MCP_SERVER_INFO = { name: 'signery', version: '1.0.0' };

const INSTRUCTIONS =
  'Signery keeps a person in the loop: tools that would share, remind, sign, seal, delete or send mail only propose the act and answer {pendingActionId, state: "pending"}; a person approves it in Signery. Never tell the user something was sent until list_events shows agentActionApproved for it. Read with find_documents and get_document; prepare with upload_pdf, create_document and place_fields.';

/** The compiled argument check of each tool, made once per tool set. */
const checks = new WeakMap<AgentTool, ValidateFunction>();
const ajv = addFormats(new Ajv({ allErrors: false, useDefaults: true, strict: false, coerceTypes: false }));

function checkOf(tool: AgentTool): ValidateFunction {
  let check = checks.get(tool);
  if (!check) {
    check = ajv.compile(tool.input);
    checks.set(tool, check);
  }
  return check;
}

/** The same words as the API's 400 (`"data[0].shareTo" must …`), for the model to correct itself. */
function argumentProblem(check: ValidateFunction): ValidationError {
  const error = check.errors?.[0];
  const path = (error?.instancePath ?? '')
    .replace(/^\//, '')
    .replace(/\/(\d+)/g, '[$1]')
    .replaceAll('/', '.');
  const extra =
    error?.keyword === 'additionalProperties'
      ? `${path ? `${path}.` : ''}${String((error.params as { additionalProperty?: string }).additionalProperty)}`
      : path;
  return new ValidationError(
    extra || 'arguments',
    error?.keyword === 'additionalProperties' ? 'is not allowed' : (error?.message ?? 'is not valid'),
  );
}

/** A tool's answer as MCP content: the JSON as text and as structured content, a file as an embedded resource. */
function answerOf(json: unknown, file?: { name: string; mimeType: string; base64: string }): CallToolResult {
  return {
    content: [
      { type: 'text', text: JSON.stringify(json) },
      ...(file
        ? [
            {
              type: 'resource' as const,
              resource: {
                uri: `signery:file/${encodeURIComponent(file.name)}`,
                mimeType: file.mimeType,
                blob: file.base64,
              },
            },
          ]
        : []),
    ],
    ...(json !== null && typeof json === 'object' && !Array.isArray(json)
      ? { structuredContent: json as Record<string, unknown> }
      : {}),
  };
}

/** A refused or failed call, as MCP reports a tool's error (`isError`), in the API's error words. */
function errorAnswer(error: AppError): CallToolResult {
  return {
    isError: true,
    content: [
      {
        type: 'text',
        text: JSON.stringify({ statusCode: error.statusCode, code: error.code, message: error.message }),
      },
    ],
  };
}

const DOCUMENT_URI = /^signery:\/\/documents\/([^/?#]+)$/;

/**
 * The MCP server one caller talks to (issue 42): the tools (src/mcp/tools.ts) with the caller's
 * rights, every call an audit record `agentToolCall`; a document as a resource; the prompt "send this
 * contract for signature". Built per request on /mcp (stateless Streamable HTTP), so nothing of one
 * caller outlives their request.
 *
 * ```ts
 * const server = mcpServer(deps, actor);
 * await server.connect(transport);
 * ```
 */
export function mcpServer(deps: Deps, actor: Actor): Server {
  const tools = agentTools(deps);
  const server = new Server(MCP_SERVER_INFO, {
    capabilities: { tools: {}, resources: {}, prompts: {} },
    instructions: INSTRUCTIONS,
  });

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools
      .filter((t) => !(actor.readOnly && t.write))
      .map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: t.input as { type: 'object'; [key: string]: unknown },
        annotations: {
          title: t.title,
          readOnlyHint: !t.write,
          destructiveHint: false,
          idempotentHint: !t.write,
          openWorldHint: t.consequential,
        },
      })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = tools.find((t) => t.name === request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    const args: unknown = request.params.arguments ?? {};
    const audit = (outcome: Parameters<typeof recordToolCall>[2]) => recordToolCall(deps, actor, outcome);
    try {
      if (tool.write && actor.readOnly) throw new Forbidden(`This key only reads: ${tool.name} is refused`);
      const check = checkOf(tool);
      if (!check(args)) throw argumentProblem(check);
      const answer = await tool.run(deps, actor, args);
      const pendingActionId = tool.consequential
        ? (answer.json as { pendingActionId?: string }).pendingActionId
        : undefined;
      await audit({
        tool: tool.name,
        arguments: args,
        outcome: tool.consequential ? 'pending' : 'answered',
        documentId: tool.documentOf?.(args),
        pendingActionId,
      });
      return answerOf(answer.json, answer.file);
    } catch (error) {
      if (!(error instanceof AppError)) {
        await audit({ tool: tool.name, arguments: args, outcome: 'failed', code: 'INTERNAL_ERROR' });
        throw error;
      }
      await audit({ tool: tool.name, arguments: args, outcome: 'refused', code: error.code });
      return errorAnswer(error);
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [] }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: 'signery://documents/{documentId}',
        name: 'document',
        title: 'A document',
        description:
          'A document’s metadata and current state (title, state, who still has to act, custom fields), as get_document answers it; not the PDF bytes (download_signed_pdf).',
        mimeType: 'application/json',
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const match = DOCUMENT_URI.exec(request.params.uri);
    if (!match)
      throw new McpError(ErrorCode.InvalidParams, 'Unknown resource: signery://documents/{documentId}');
    try {
      const document = await getDocument(deps, actor, decodeURIComponent(match[1]!));
      await recordToolCall(deps, actor, {
        tool: 'resources/read',
        arguments: { uri: request.params.uri },
        outcome: 'answered',
        documentId: document.documentId,
      });
      return {
        contents: [{ uri: request.params.uri, mimeType: 'application/json', text: JSON.stringify(document) }],
      };
    } catch (error) {
      if (error instanceof AppError) throw new McpError(ErrorCode.InvalidParams, error.message);
      throw error;
    }
  });

  server.setRequestHandler(ListPromptsRequestSchema, () => ({
    prompts: [
      {
        name: 'send_for_signature',
        title: 'Send this contract for signature',
        description:
          'Walks the model through uploading a PDF, placing fields and proposing the share for approval.',
        arguments: [
          { name: 'signers', description: 'Who signs: e-mail addresses, comma-separated.', required: true },
          {
            name: 'anchor',
            description: 'Text in the PDF the signature goes near, e.g. "Signature:".',
            required: false,
          },
        ],
      },
    ],
  }));
  server.setRequestHandler(GetPromptRequestSchema, (request) => {
    if (request.params.name !== 'send_for_signature')
      throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
    const signers = request.params.arguments?.signers ?? '';
    const anchor = request.params.arguments?.anchor;
    return {
      description: 'Send this contract for signature',
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text: [
              `Send the attached contract for signature to: ${signers}.`,
              '1. upload_pdf with the PDF as base64, then create_document with the fileId and a clear title.',
              `2. place_fields: one signature field per signer${anchor ? ` by anchor text "${anchor}"` : ' (by anchor text if the contract has a signature line, else by position on the last page)'}, each field's user set to that signer.`,
              '3. prepare_share with the document id, each signer as a recipient with sharePurpose "sign", and the signatureFields from step 2.',
              '4. It answers a pendingActionId: tell me a person must approve it in Signery. Do not say it was sent.',
              '5. Wait with list_events (pass the cursor each time) for agentActionApproved, agentActionRejected or agentActionInterrupted on this document, and tell me which.',
            ].join('\n'),
          },
        },
      ],
    };
  });

  return server;
}
