import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { anAgentKey } from '../agents/agent-keys.js';
import { aDocument } from '../helpers/documents.js';
import { aUser, OWNER } from '../helpers/people.js';
import { securityHeaderProblem } from '../helpers/security-headers.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { mutate, validish, withNul, type Mutation } from './malformed-requests.js';
import type { Schema } from './openapi-routes.js';
import { NoAnswer, send, type RawResponse } from './raw-request.js';

/**
 * /mcp under malformed input, as an agent sends it (issue 42, Must show: "The fuzz suite and access
 * matrix cover /mcp"). The OpenAPI walk (api-fuzz.test.ts) reaches POST /mcp only with sessions, which
 * it refuses before the MCP server reads anything; here an agent's API key and a read-only key send
 * broken HTTP, broken JSON-RPC and, for every tool of tools/list, arguments shaped by the tool's own
 * input schema and then broken (a wrong type, a missing or extra member, a huge value, NUL). For every
 * answer: no 5xx and no silence; the security headers; the key never repeated; an HTTP error is either
 * the Contract's `{statusCode, error, message, code}` or a JSON-RPC error and nothing else; a tool's
 * error is words, never a stack. And for the whole run: whatever the agent sent, nothing was shared,
 * mailed to a recipient or approved, and the server still answers.
 *
 * Seeded like the OpenAPI walk: FUZZ_SEED replays a run, FUZZ_RUNS sets the random calls per tool.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_124);
const RUNS = Number(process.env.FUZZ_RUNS ?? 24);
const REQUEST_TIMEOUT_MS = 10_000;
const ACCEPT = 'application/json, text/event-stream';

interface Message {
  family: string;
  body: Buffer;
  headers?: Record<string, string>;
  key?: 'agent' | 'readOnly' | 'none';
}

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value) ?? 'null', 'utf8');
const call = (id: unknown, name: unknown, args: unknown): unknown => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

const BREAKAGES: { mutation: Mutation; replacement: unknown; key: string }[] = [
  { mutation: 'wrongType', replacement: [{ not: 'this' }], key: '' },
  { mutation: 'remove', replacement: undefined, key: '' },
  { mutation: 'extra', replacement: { polluted: true }, key: '__proto__' },
  { mutation: 'extra', replacement: 1, key: 'unexpected' },
  { mutation: 'huge', replacement: 'a'.repeat(200_000), key: '' },
  { mutation: 'huge', replacement: Number.MAX_SAFE_INTEGER + 2, key: '' },
];

/** The OpenAPI walk's breakages (mutate), and NUL in every string, on a tool's arguments. */
function broken(args: unknown, pick: number, how: number): unknown {
  if (how % (BREAKAGES.length + 1) === BREAKAGES.length) return withNul(args);
  const { mutation, replacement, key } = BREAKAGES[how % (BREAKAGES.length + 1)]!;
  return mutate(structuredClone(args), pick, mutation, replacement, key);
}

/** JSON-RPC messages that are broken as HTTP or as JSON-RPC, whatever the tools are. */
function protocolMessages(): Message[] {
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
  };
  return [
    { family: 'empty body', body: Buffer.alloc(0) },
    { family: 'invalid JSON', body: Buffer.from('{"jsonrpc":"2.0",') },
    { family: 'JSON null', body: Buffer.from('null') },
    { family: 'a batch', body: json([init, { jsonrpc: '2.0', id: 2, method: 'tools/list' }]) },
    { family: 'an empty batch', body: json([]) },
    { family: 'JSON-RPC 1.0', body: json({ jsonrpc: '1.0', id: 1, method: 'tools/list' }) },
    { family: 'no method', body: json({ jsonrpc: '2.0', id: 1 }) },
    { family: 'a number for the method', body: json({ jsonrpc: '2.0', id: 1, method: 7 }) },
    { family: 'an unknown method', body: json({ jsonrpc: '2.0', id: 1, method: 'tools/explode' }) },
    { family: 'an object for the id', body: json({ jsonrpc: '2.0', id: { a: 1 }, method: 'tools/list' }) },
    { family: 'a notification', body: json({ jsonrpc: '2.0', method: 'notifications/initialized' }) },
    { family: 'a response sent to the server', body: json({ jsonrpc: '2.0', id: 9, result: {} }) },
    { family: 'initialize', body: json(init) },
    {
      family: 'initialize with garbage',
      body: json({ ...init, params: { protocolVersion: 42, capabilities: 'all', clientInfo: null } }),
    },
    { family: 'tools/call without params', body: json({ jsonrpc: '2.0', id: 1, method: 'tools/call' }) },
    { family: 'an unknown tool', body: json(call(1, 'approve_action', {})) },
    { family: 'a number for the tool', body: json(call(1, 12, {})) },
    { family: 'arguments as an array', body: json(call(1, 'find_documents', [1, 2])) },
    { family: 'arguments as a string', body: json(call(1, 'get_document', 'x')) },
    {
      family: 'resources/read of a foreign URI',
      body: json({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'file:///etc/passwd' } }),
    },
    {
      family: 'resources/read of no URI',
      body: json({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: {} }),
    },
    {
      family: 'prompts/get of no prompt',
      body: json({ jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'nope' } }),
    },
    { family: 'a deep object', body: json(call(1, 'find_documents', nested(3000))) },
    {
      family: 'a huge body',
      body: json(call(1, 'upload_pdf', { fileName: 'a.pdf', contentBase64: 'A'.repeat(64 * 1024 * 1024) })),
    },
    {
      family: 'no Accept',
      body: json({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      headers: { accept: '' },
    },
    {
      family: 'Accept: text/html',
      body: json({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      headers: { accept: 'text/html' },
    },
    {
      family: 'text/plain',
      body: json({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      headers: { 'content-type': 'text/plain' },
    },
    {
      family: 'a garbage protocol version',
      body: json({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      headers: { 'mcp-protocol-version': '1999-13-45\u00e9' },
    },
    {
      family: 'a session id nobody gave',
      body: json({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      headers: { 'mcp-session-id': 'b'.repeat(300) },
    },
    { family: 'no key', body: json({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), key: 'none' },
    {
      family: 'a foreign Origin',
      body: json({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      headers: { origin: 'https://evil.example' },
    },
  ];
}

function nested(depth: number): unknown {
  let value: unknown = 'x';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

const server: TestServer = await startServer({
  env: { LOGIN_MAX_FAILURES_PER_ADDRESS: '1000000', LOGIN_MAX_FAILURES_PER_ACCOUNT: '1000000' },
});
const owner = await aUser(server, {
  ...OWNER,
  rights: ['use_file_management', 'use_document_management', 'use_webhooks', 'download_attachment'],
});
const keys = {
  agent: await anAgentKey(server, owner.token),
  readOnly: await anAgentKey(server, owner.token, { agent: true, readOnly: true }),
};
const documentId = await aDocument(server, owner.token);

interface Violation {
  family: string;
  request: string;
  status: number;
  problem: string;
  answer: string;
}
const violations: Violation[] = [];
let requests = 0;

async function post(message: Message): Promise<RawResponse | undefined> {
  const key = message.key ?? 'agent';
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: ACCEPT,
    ...(key === 'none' ? {} : { authorization: `Bearer ${keys[key]}` }),
    ...message.headers,
  };
  for (const [name, value] of Object.entries(headers)) if (value === '') delete headers[name];
  requests++;
  const summary = `${message.family}: ${message.body.subarray(0, 160).toString('utf8')}`;
  try {
    const response = await send(
      server.url,
      { method: 'POST', path: '/mcp', headers, body: message.body },
      REQUEST_TIMEOUT_MS,
    );
    for (const problem of problemsOf(response))
      violations.push({
        family: message.family,
        request: summary,
        status: response.status,
        problem,
        answer: response.text.slice(0, 300),
      });
    return response;
  } catch (error) {
    // A connection closed on a body past the limit is an answer of sorts; silence is not.
    if (error instanceof NoAnswer)
      violations.push({
        family: message.family,
        request: summary,
        status: 0,
        problem: 'no answer',
        answer: '',
      });
    return undefined;
  }
}

/** What is wrong with one answer of /mcp; empty when nothing is. */
function problemsOf(response: RawResponse): string[] {
  const problems: string[] = [];
  const header = (name: string) => {
    const value = response.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  if (response.status >= 500) problems.push(`answered ${response.status}`);
  const headerProblem = securityHeaderProblem(header);
  if (headerProblem) problems.push(headerProblem);
  for (const key of Object.values(keys))
    if (response.text.includes(key) || JSON.stringify(response.headers).includes(key))
      problems.push('the answer repeats the API key');
  if (response.status === 202) {
    if (response.text !== '') problems.push('a 202 with a body');
    return problems;
  }
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(response.text) as Record<string, unknown>;
  } catch {
    problems.push(`the ${response.status} answer is not JSON`);
    return problems;
  }
  // -32603 is JSON-RPC's 500: the server's fault, never an answer to what a client sent.
  if ((body.error as { code?: unknown } | undefined)?.code === -32603)
    problems.push(
      `an internal error: ${String((body.error as { message?: unknown }).message).slice(0, 200)}`,
    );
  const keysOf = Object.keys(body ?? {})
    .sort()
    .join();
  if (response.status >= 400) {
    const contract =
      keysOf === 'code,error,message,statusCode' &&
      body.statusCode === response.status &&
      ['error', 'message', 'code'].every((k) => typeof body[k] === 'string');
    if (!contract && !isJsonRpcError(body))
      problems.push(`an error that is neither the Contract's nor JSON-RPC's: ${keysOf}`);
    return problems;
  }
  if (body.jsonrpc !== '2.0' || !('id' in body) || !('result' in body || 'error' in body))
    problems.push(`a ${response.status} that is not a JSON-RPC answer: ${keysOf}`);
  if ('error' in body && !isJsonRpcError(body)) problems.push('a malformed JSON-RPC error');
  // -32603 is JSON-RPC's 500: the server's fault, never an answer to what a client sent.
  if ((body.error as { code?: unknown } | undefined)?.code === -32603)
    problems.push(
      `an internal error: ${String((body.error as { message?: unknown }).message).slice(0, 200)}`,
    );
  const result = body.result as
    { isError?: boolean; content?: { type: string; text?: string }[] } | undefined;
  if (result?.isError) {
    const text = result.content?.map((c) => c.text ?? '').join('\n') ?? '';
    if (/\n\s+at .+:\d+:\d+|node_modules|\/src\/|\bSQLITE_|\bsyntax error at\b/.test(text))
      problems.push(`a tool error that shows the server's insides: ${text.slice(0, 200)}`);
    if (text.trim() === '') problems.push('a tool error without words');
  }
  return problems;
}

function isJsonRpcError(body: Record<string, unknown>): boolean {
  const error = body.error as Record<string, unknown> | undefined;
  return (
    body.jsonrpc === '2.0' &&
    'id' in body &&
    typeof error === 'object' &&
    error !== null &&
    Number.isInteger(error.code) &&
    typeof error.message === 'string'
  );
}

function seedOf(name: string): number {
  return createHash('sha256').update(`${SEED}:mcp:${name}`).digest().readInt32LE(0);
}

describe(`fuzz: /mcp as an agent sends it, under malformed input (FUZZ_SEED=${SEED}, FUZZ_RUNS=${RUNS})`, () => {
  let tools: { name: string; inputSchema: Schema }[] = [];
  before(async () => {
    const listed = await post({
      family: 'tools/list',
      body: json({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    tools = (JSON.parse(listed!.text) as { result: { tools: typeof tools } }).result.tools;
  });
  after(async () => {
    console.log(
      `mcp fuzz summary: seed ${SEED}, ${RUNS} random calls per tool, requests sent ${requests}, violations ${violations.length}`,
    );
    await server.close();
  });

  it('broken HTTP and broken JSON-RPC: no 5xx, no silence, the Contract’s or JSON-RPC’s error, the key never repeated', async () => {
    for (const message of protocolMessages()) await post(message);
    assert.deepEqual(violations.splice(0), []);
  });

  it('params that do not fit their method are -32602 Invalid params naming the member, not an internal error', async () => {
    const answer = await post({
      family: 'arguments as an array',
      body: json(call(7, 'find_documents', [1])),
    });
    assert.deepEqual(JSON.parse(answer!.text), {
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32602, message: 'Invalid params: params.arguments must be an object, not an array' },
    });
  });

  it('without a key, a 401 that says how to send one', async () => {
    const answer = await post({
      family: 'no key',
      body: json({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      key: 'none',
    });
    assert.equal(answer!.status, 401);
    assert.match(JSON.parse(answer!.text).message, /API key as Authorization: Bearer/);
  });

  it('lists the tools to fuzz', () => {
    assert.ok(tools.length >= 10, `only ${tools.length} tools`);
  });

  it('every tool, with arguments shaped by its schema and then broken, by an agent key and a read-only key', async () => {
    const ids: unknown[] = [documentId, 'x', '', '../../etc/passwd', '1 OR 1=1', -1];
    for (const tool of tools) {
      const shaped = fc.sample(validish(tool.inputSchema), { seed: seedOf(tool.name), numRuns: RUNS });
      const picks = fc.sample(fc.tuple(fc.nat(), fc.nat(), fc.constantFrom(...ids)), {
        seed: seedOf(`${tool.name}:picks`),
        numRuns: RUNS,
      });
      for (const [i, args] of shaped.entries()) {
        const [pick, how, id] = picks[i]!;
        // Half the calls name a real document where the schema has a place for one.
        const withId =
          args && typeof args === 'object' && 'documentId' in args
            ? { ...args, documentId: i % 2 === 0 ? documentId : id }
            : args;
        const family = `${tool.name} (${i})`;
        await post({ family: `${family} shaped`, body: json(call(i, tool.name, withId)) });
        await post({ family: `${family} broken`, body: json(call(i, tool.name, broken(withId, pick, how))) });
        if (i % 4 === 0)
          await post({
            family: `${family} read-only`,
            body: json(call(i, tool.name, withId)),
            key: 'readOnly',
          });
      }
      const health = await send(server.url, { method: 'GET', path: '/healthz', headers: {} }, 30_000);
      assert.equal(health.status, 200, `GET /healthz after ${tool.name}`);
    }
    assert.deepEqual(violations.splice(0), []);
  });

  it('whatever the agent sent, nothing was shared, mailed to a recipient or approved', async () => {
    const db = server.app.deps.db;
    const shares = await db.selectFrom('shares').select('id').execute();
    assert.deepEqual(shares, [], 'no share exists: every one the agent asked for waits for a person');
    const approved = await db
      .selectFrom('agent_actions')
      .select(['id', 'state'])
      .where('state', '!=', 'pending')
      .execute();
    assert.deepEqual(approved, [], 'every action the agent proposed still waits for a person');
    const proposed = await db.selectFrom('agent_actions').select('id').execute();
    const mails = await db.selectFrom('jobs').select('id').where('type', '=', 'mail.send').execute();
    assert.equal(
      mails.length,
      proposed.length,
      'the only mails are the owner’s approval requests, one per action',
    );
  });
});
