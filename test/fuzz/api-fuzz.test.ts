import assert from 'node:assert/strict';
import { securityHeaderProblem } from '../helpers/security-headers.js';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { makePdf } from '../helpers/pdf.js';
import { startServer, upload, type TestServer } from '../helpers/server.js';
import { hostilePdfs } from './hostile-pdfs.js';
import { fixedCases, fuzzCases, type Caller, type FuzzCase } from './malformed-requests.js';
import { routeKey, routesOf, type Route } from './openapi-routes.js';
import { NoAnswer, send, type RawRequest, type RawResponse } from './raw-request.js';

/**
 * The API under malformed input (issue 20, "Deliver as well"): every route of the served OpenAPI
 * document gets fixed hostile cases and FUZZ_RUNS random ones from fast-check, as an administrator,
 * as a plain user, with a bogus token and with none. For every answer (Contract, Errors): no 5xx;
 * every error is exactly `{statusCode, error, message, code}`; "no message repeats the request URL or
 * any token or key", nor any secret the request carried; and the server still answers GET /healthz
 * after each route's batch.
 *
 * Seeded and bounded: FUZZ_SEED (printed) replays a run, FUZZ_RUNS sets the random cases per route,
 * FUZZ_REPORT=<file> writes every violation as JSON.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_124);
const RUNS = Number(process.env.FUZZ_RUNS ?? 24);
/**
 * How long a request may go unanswered before it counts as a hang. Not a performance bound: the
 * slowest legitimate case here (a 16 MiB deflate bomb) answers in about a second. After a hang the
 * route's other cases of the same family are skipped, so a hole costs one timeout, not dozens.
 */
const REQUEST_TIMEOUT_MS = 10_000;
/** The only answer that may carry the caller's own token: GET /login echoes it (spec: Login response). */
const TOKEN_ANSWERS = new Set(['GET /api/v1/login']);

interface Violation {
  route: string;
  family: string;
  caller: Caller;
  request: string;
  status: number;
  problem: string;
  answer: string;
}

const server: TestServer = await startServer({
  // Fuzzed logins fail by the thousand from one address; the throttle is tested elsewhere.
  env: { LOGIN_MAX_FAILURES_PER_ADDRESS: '1000000', LOGIN_MAX_FAILURES_PER_ACCOUNT: '1000000' },
});
const root = await server.adminToken();
const pdfs = hostilePdfs();
const document = (await server.api('GET', '/openapi.json')).body;
const routes = routesOf(document);

let actorCount = 0;
/** A fresh account of `role`, logged in: fuzzing may log out, suspend or delete the previous one. */
async function freshActor(role: 'superAdmin' | 'user'): Promise<{ id: string; token: string }> {
  const name = `fuzz-${role}-${++actorCount}`;
  const created = await server.api('POST', '/users', {
    token: root,
    body: { name, password: 'user-password-1', role, email: `${name}@example.test` },
  });
  assert.equal(created.status, 200, created.text);
  return { id: created.body.id as string, token: await server.login(name, 'user-password-1') };
}

const actors = { admin: await freshActor('superAdmin'), user: await freshActor('user') };
// Real ids of the user's resources, so some requests reach a handler past "not found".
const fileId = await upload(server, actors.user.token, makePdf());
const documentId = (
  await server.api('POST', '/documents', {
    token: actors.user.token,
    body: {
      body: {
        documentTitle: 'Fuzzed',
        pdfFile: { content: await upload(server, actors.user.token, makePdf()) },
      },
    },
  })
).body.results[0].documentId as string;
const folderId = (
  await server.api('POST', '/folders', {
    token: actors.user.token,
    body: { name: 'F', isShared: false, parentFolderId: null },
  })
).body.id as string;
const known = [documentId, fileId, folderId, actors.user.id, actors.admin.id, '1', '2'];

function tokenOf(caller: Caller): string | undefined {
  if (caller === 'admin') return actors.admin.token;
  if (caller === 'user') return actors.user.token;
  if (caller === 'bogus') return 'tok_ZqBogusTokenThatIsNotValid00000000000000';
  return undefined;
}

function build(route: Route, c: FuzzCase): { request: RawRequest; secrets: string[]; token?: string } {
  let path = route.path;
  route.pathParams.forEach((param, i) => {
    path = path.replace(`{${param.name}}`, c.pathValues[i] ?? 'x');
  });
  const token = tokenOf(c.caller);
  const headers: Record<string, string> = {};
  const query: string[] = c.query ? [c.query] : [];
  if (token && c.tokenIn === 'query') query.push(`token=${encodeURIComponent(token)}`);
  if (token && c.tokenIn === 'bearer') headers.authorization = `Bearer ${token}`;
  if (token && c.tokenIn === 'cookie') headers.cookie = `signery_token=${token}`;
  if (c.contentType !== undefined) headers['content-type'] = c.contentType;
  return {
    request: {
      method: route.method,
      path: query.length ? `${path}?${query.join('&')}` : path,
      headers,
      body: c.body,
    },
    secrets: [...c.secrets, ...(token ? [token] : [])],
    token,
  };
}

/** What is wrong with one answer, by the Contract's rules; empty when nothing is. */
function problemsOf(
  route: Route,
  request: RawRequest,
  secrets: string[],
  token: string | undefined,
  response: RawResponse,
): string[] {
  const problems: string[] = [];
  if (response.status >= 500) problems.push(`answered ${response.status}`);
  const headerProblem = securityHeaderProblem((name) => {
    const value = response.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  });
  if (headerProblem) problems.push(headerProblem);
  const headerText = Object.entries(response.headers)
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : (v ?? '')}`)
    .join('\n');
  for (const secret of secrets) {
    if (headerText.includes(secret)) problems.push(`a header repeats the secret ${secret.slice(0, 8)}…`);
    const tokenAnswer = TOKEN_ANSWERS.has(routeKey(route)) && response.status < 300;
    if ((response.status >= 400 || (secret === token && !tokenAnswer)) && response.text.includes(secret))
      problems.push(`the body repeats the secret ${secret.slice(0, 8)}…`);
  }
  if (response.status >= 400) {
    let body: unknown;
    try {
      body = JSON.parse(response.text);
    } catch {
      problems.push('the error body is not JSON');
      return problems;
    }
    const shape = body as Record<string, unknown>;
    const keys = Object.keys(shape ?? {}).sort();
    if (keys.join() !== 'code,error,message,statusCode') problems.push(`error keys are ${keys.join(',')}`);
    if (typeof shape.statusCode !== 'number' || shape.statusCode !== response.status)
      problems.push(`statusCode ${String(shape.statusCode)} for an answer ${response.status}`);
    for (const key of ['error', 'message', 'code'])
      if (typeof shape[key] !== 'string') problems.push(`${key} is not a string`);
    const url = request.path.split('?')[0]!;
    if (typeof shape.message === 'string' && url.length > 8 && shape.message.includes(url))
      problems.push('the message repeats the request URL');
  }
  return problems;
}

const totals = {
  requests: 0,
  fiveHundreds: 0,
  noAnswer: 0,
  covered: new Set<string>(),
  violations: [] as Violation[],
};

/** After a batch: the server answers, and the actors still hold working sessions (or get new ones). */
async function afterBatch(route: string, planted: string[]): Promise<string[]> {
  const problems: string[] = [];
  const health = await send(server.url, { method: 'GET', path: '/healthz', headers: {} }, 30_000).catch(
    (error: Error) => ({ status: 0, text: error.message, headers: {} }),
  );
  if (health.status !== 200)
    problems.push(`GET /healthz answered ${health.status} after ${route}: ${health.text}`);
  for (const role of ['admin', 'user'] as const) {
    const me = await server.api('GET', '/login', { token: actors[role].token });
    // spec: PUT /configuration cannot change `password`; a secret sent anywhere never shows in a login.
    for (const secret of planted)
      if (me.text.includes(secret))
        problems.push(`GET /login of the ${role} shows a secret sent to ${route}`);
    if (!(me.body?.logged && me.body?.isUnlocked))
      actors[role] = await freshActor(role === 'admin' ? 'superAdmin' : 'user');
  }
  return problems;
}

function seedOf(route: Route): number {
  return createHash('sha256')
    .update(`${SEED}:${routeKey(route)}`)
    .digest()
    .readInt32LE(0);
}

describe(`fuzz: every route of the OpenAPI document under malformed input (FUZZ_SEED=${SEED}, FUZZ_RUNS=${RUNS})`, () => {
  after(async () => {
    const summary = `fuzz summary: seed ${SEED}, ${RUNS} random runs per route, requests sent ${totals.requests}, routes covered ${totals.covered.size} of ${routes.length}, 5xx seen ${totals.fiveHundreds}, no answer ${totals.noAnswer}, violations ${totals.violations.length}`;
    console.log(summary);
    if (process.env.FUZZ_REPORT)
      writeFileSync(process.env.FUZZ_REPORT, JSON.stringify(totals.violations, null, 1));
    await server.close();
  });

  it('the OpenAPI document lists the routes to fuzz', () => {
    assert.ok(routes.length > 100, `only ${routes.length} routes`);
  });

  for (const route of routes) {
    const key = routeKey(route);
    it(`${key}: no 5xx, Contract-shaped errors, no secret echoed, the server still answers`, async () => {
      const cases = [
        ...fixedCases(route, known, pdfs, seedOf(route)),
        ...fc.sample(fuzzCases(route, known, pdfs), { seed: seedOf(route), numRuns: RUNS }),
      ];
      const found: Violation[] = [];
      const planted: string[] = [];
      const hung = new Set<string>();
      for (const c of cases) {
        if (hung.has(c.family)) continue;
        const { request, secrets, token } = build(route, c);
        planted.push(...c.secrets);
        totals.requests++;
        totals.covered.add(key);
        const summary = `${request.method} ${request.path.slice(0, 160)}${request.path.length > 160 ? '…' : ''} [${request.headers['content-type'] ?? 'no body'}${request.body ? `, ${request.body.length} bytes` : ''}]`;
        let response: RawResponse;
        try {
          response = await send(server.url, request, REQUEST_TIMEOUT_MS);
        } catch (error) {
          const reset = !(error instanceof NoAnswer);
          if (!reset) totals.noAnswer++;
          // A connection closed on an upload the server refused early is an answer of sorts; silence is not.
          if (!reset) hung.add(c.family);
          if (!reset)
            found.push({
              route: key,
              family: c.family,
              caller: c.caller,
              request: summary,
              status: 0,
              problem: 'no answer',
              answer: '',
            });
          continue;
        }
        if (response.status >= 500) totals.fiveHundreds++;
        for (const problem of problemsOf(route, request, secrets, token, response))
          found.push({
            route: key,
            family: c.family,
            caller: c.caller,
            request: summary,
            status: response.status,
            problem,
            answer: response.text.slice(0, 300),
          });
      }
      for (const problem of await afterBatch(key, planted))
        found.push({
          route: key,
          family: 'after the batch',
          caller: 'none',
          request: '',
          status: 0,
          problem,
          answer: '',
        });
      totals.violations.push(...found);
      assert.deepEqual(
        found.map((v) => `${v.problem} — ${v.family} as ${v.caller}: ${v.request} → ${v.status} ${v.answer}`),
        [],
      );
    });
  }
});
