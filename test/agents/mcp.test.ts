import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { assertError } from '../helpers/api-errors.js';
import { auditOf } from '../helpers/audit-log.js';
import { aDocument } from '../helpers/documents.js';
import { makePdf } from '../helpers/pdf.js';
import { aUser, OWNER } from '../helpers/people.js';
import { ADMIN, mustSucceed, type TestServer } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { useReceiver, waitFor } from '../webhooks/helpers.js';
import { anAgentKey } from './agent-keys.js';

const TOOLS = [
  'find_documents',
  'get_document',
  'upload_pdf',
  'create_document',
  'place_fields',
  'prepare_share',
  'send_reminder',
  'verify_document',
  'download_signed_pdf',
  'list_events',
];
// ajv-formats is CommonJS with its function on `default`.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const WRITE_TOOLS = ['upload_pdf', 'create_document', 'prepare_share', 'send_reminder'];

/** The official SDK's client, connected to the server's /mcp with `key`. */
async function anMcpClient(server: TestServer, key: string): Promise<Client> {
  const client = new Client({ name: 'signery-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

// The tools answer JSON as their first content.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Answer = { isError?: boolean; content: any[]; structuredContent?: any };

function jsonOf(answer: Answer) {
  return JSON.parse(answer.content[0].text as string);
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Answer> {
  return (await client.callTool({ name, arguments: args })) as Answer;
}

/**
 * Issue 42, Must show: "Tests with the official SDK's client against a real server: tools/list names
 * the tools with valid schemas; preparing and sending a share without approval sends no mail and no
 * webhook; after a person's approval the mail and the signRequest event go out with the approver as
 * actor; an agent key's approve call is refused; a read-only key is refused every write tool."
 */
describe('the MCP server: an agent prepares, a person approves every send', () => {
  const receiver = useReceiver();
  const server = useServer(() => ({ smtp: true, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } }));
  let owner: { token: string };
  let agentKey: string;
  let agent: Client;
  before(async () => {
    owner = await aUser(server, {
      ...OWNER,
      rights: ['use_file_management', 'use_document_management', 'use_webhooks', 'download_attachment'],
    });
    agentKey = await anAgentKey(server, owner.token);
    agent = await anMcpClient(server, agentKey);
    const admin = await server.adminToken();
    mustSucceed(
      await server.api('POST', '/webhooks', {
        token: admin,
        body: { type: 'tenant', callbackUrl: receiver.url },
      }),
      'POST /webhooks',
    );
  });

  it('tools/list names the tools, each with a valid JSON Schema of an object', async () => {
    const { tools } = await agent.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      TOOLS,
    );
    const ajv = addFormats(new Ajv({ strict: false }));
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.doesNotThrow(() => ajv.compile(tool.inputSchema), tool.name);
      assert.ok((tool.description ?? '').length > 40, `${tool.name} is described for a model`);
    }
  });

  it('an uploaded PDF becomes a document; the share it prepares sends nothing until a person approves', async () => {
    const pdf = makePdf({ lines: ['Service agreement', 'Signature:'] });
    const uploaded = jsonOf(
      await call(agent, 'upload_pdf', { name: 'service.pdf', contentBase64: pdf.toString('base64') }),
    );
    const document = jsonOf(
      await call(agent, 'create_document', { documentTitle: 'Service 2027', fileId: uploaded.fileId }),
    );
    const documentId = document.documentId as string;
    const placed = jsonOf(
      await call(agent, 'place_fields', {
        documentId,
        fields: [
          {
            type: 'signature',
            user: ['kim@example.org'],
            anchor: {
              text: 'Signature:',
              offset: { percentY: 0.02, percentWidth: 0.2, percentHeight: 0.05 },
            },
          },
        ],
      }),
    );
    assert.equal(placed.signatureFields.length, 1);
    const proposed = await call(agent, 'prepare_share', {
      id: documentId,
      data: [{ sharePurpose: 'sign', shareTo: 'kim@example.org' }],
      signatureFields: placed.signatureFields,
    });
    const pending = jsonOf(proposed);
    assert.equal(pending.state, 'pending');
    assert.ok(pending.pendingActionId);

    const db = server.app.deps.db;
    const mails = await db.selectFrom('jobs').select('id').where('type', '=', 'mail.send').execute();
    assert.equal(mails.length, 1, 'one mail is queued before approval: the one asking the key’s owner');
    await server.smtp.waitFor(OWNER.email, new RegExp(`/approve/${pending.pendingActionId}`));
    assert.ok(
      !server.smtp.messages.some((m) => m.to.includes('kim@example.org')),
      'nothing to the recipient',
    );
    const deliveries = await db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('events as e', 'e.id', 'd.event_id')
      .select('e.event')
      .where('e.document_id', '=', documentId)
      .execute();
    assert.deepEqual(
      deliveries.map((d) => d.event),
      ['documentCreated'],
      'no webhook for the pending share: only the document’s creation',
    );

    const refused = await server.api('POST', `/agent-actions/${pending.pendingActionId}/approve`, {
      token: agentKey,
    });
    assertError(refused, 403, 'FORBIDDEN');

    const feed = jsonOf(await call(agent, 'list_events', {}));
    assert.ok(
      feed.events.some(
        (e: { event: string; documentId: string }) =>
          e.event === 'agentActionPending' && e.documentId === documentId,
      ),
      'the agent can wait on the feed',
    );

    const admin = await server.adminToken();
    const approved = mustSucceed(
      await server.api('POST', `/agent-actions/${pending.pendingActionId}/approve`, { token: admin }),
      'approve',
    );
    assert.equal(approved.body.state, 'executed');
    await server.smtp.waitFor('kim@example.org', /Service 2027/);
    await waitFor(
      () => receiver.received.some((r) => r.json.event === 'signRequest' && r.json.documentId === documentId),
      20_000,
      'the signRequest webhook',
    );
    const signRequest = receiver.received.find(
      (r) => r.json.event === 'signRequest' && r.json.documentId === documentId,
    );
    assert.equal(signRequest?.json.actor, ADMIN.name, 'the approver is the actor of the act');
    assert.ok(
      !receiver.received.some((r) => r.json.event.startsWith('agentAction')),
      'the pending-action events are the feed’s only',
    );

    const calls = await auditOf(server, documentId, 'agentToolCall');
    assert.deepEqual(
      calls.map((c) => [c.data.tool, c.data.outcome]),
      [
        ['place_fields', 'answered'],
        ['prepare_share', 'pending'],
      ],
    );
    assert.match(String(calls[1]?.data.argumentsDigest), /^[0-9a-f]{64}$/);

    const read = jsonOf(await call(agent, 'get_document', { documentId }));
    assert.deepEqual(read.waitingFor, ['kim@example.org']);
    assert.deepEqual(
      read.recipients.map((r: Record<string, unknown>) => ({ ...r, fields: (r.fields as object[]).length })),
      [
        {
          recipient: 'kim@example.org',
          purpose: 'sign',
          status: 'active',
          owes: 'sign, now',
          fields: 1,
          actedAt: null,
          reason: null,
        },
      ],
      'what each recipient still owes',
    );
    const [field] = read.recipients[0].fields;
    assert.match(field.fieldId, /^fld_/);
    assert.equal(field.kind, 'signature');
  });

  it('every tool call is an audit record agentToolCall, a refused one too', async () => {
    const answer = await call(agent, 'get_document', { documentId: 'no-such-document' });
    assert.equal(answer.isError, true);
    assert.equal(jsonOf(answer).code, 'NOT_FOUND');
    const records = await server.app.deps.db
      .selectFrom('audit_log')
      .select(['data'])
      .where('activity_type', '=', 'agentToolCall')
      .execute();
    const refused = records
      .map((r) => (typeof r.data === 'string' ? JSON.parse(r.data) : r.data))
      .filter((d) => d.tool === 'get_document' && d.outcome === 'refused');
    assert.equal(refused.length, 1);
    assert.equal(refused[0].code, 'NOT_FOUND');
  });

  it('a read-only key is refused every write tool', async () => {
    const readOnlyKey = await anAgentKey(server, owner.token, { agent: true, readOnly: true });
    const looker = await anMcpClient(server, readOnlyKey);
    const documentId = await aDocument(server, owner.token);
    const attempts: Record<string, Record<string, unknown>> = {
      upload_pdf: { name: 'x.pdf', contentBase64: makePdf().toString('base64') },
      create_document: { documentTitle: 'x', fileId: 'f' },
      prepare_share: { id: documentId, data: [{ sharePurpose: 'sign', shareTo: 'kim@example.org' }] },
      send_reminder: { documentId },
    };
    for (const name of WRITE_TOOLS) {
      const answer = await call(looker, name, attempts[name]!);
      assert.equal(answer.isError, true, name);
      assert.equal(jsonOf(answer).code, 'FORBIDDEN', name);
    }
    const listed = (await looker.listTools()).tools.map((t) => t.name);
    assert.deepEqual(
      listed,
      TOOLS.filter((t) => !WRITE_TOOLS.includes(t)),
    );
    const pending = await server.app.deps.db
      .selectFrom('agent_actions')
      .select('id')
      .where('document_id', '=', documentId)
      .execute();
    assert.equal(pending.length, 0);
    await looker.close();
  });

  it('/mcp takes an API key, not a session, and refuses a foreign Origin', async () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const headers = { accept: 'application/json, text/event-stream' };
    assertError(await server.api('POST', '//mcp', { token: owner.token, body, headers }), 403, 'FORBIDDEN');
    const foreign = await server.api('POST', '//mcp', {
      token: agentKey,
      body,
      headers: { ...headers, origin: 'https://evil.example' },
    });
    assertError(foreign, 403, 'FORBIDDEN');
    assertError(await server.api('POST', '//mcp', { body, headers }), 401, 'UNAUTHENTICATED');
  });
});

/** Issue 42, Must show: "rate limits apply to tool calls". */
describe('tool calls count against the key’s rate limit', () => {
  const server = useServer({ env: { RATE_LIMIT_PER_MINUTE: '6' } });
  it('past the key’s limit a tool call is refused with 429', async () => {
    const owner = await aUser(server, { name: 'limited' });
    const key = await anAgentKey(server, owner.token);
    // Counted: POST /api/key was the session's; initialize, its notification and each call are the key's.
    const agent = await anMcpClient(server, key);
    let refusal: unknown;
    for (let i = 0; i < 10 && refusal === undefined; i++) {
      try {
        await agent.callTool({ name: 'find_documents', arguments: {} });
      } catch (error) {
        refusal = error;
      }
    }
    assert.match(String(refusal), /429|Too many requests|RATE_LIMITED/);
  });
});
