import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { before, describe, it } from 'node:test';
import { makePdf } from '../helpers/pdf.js';
import { createUser, upload } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
/** The spec's endpoint list, kept beside the spec, outside this repository. */
const ENDPOINTS_TSV = join(repoRoot, '..', 'shared', 'spec', 'endpoints.tsv');
const missing = existsSync(ENDPOINTS_TSV)
  ? false
  : `${ENDPOINTS_TSV} is absent: the spec's endpoint list is not checked`;

interface Endpoint {
  method: string;
  path: string;
  kind: 'specified' | 'named' | 'removed';
  area: string;
}

function readEndpoints(): Endpoint[] {
  const [header, ...lines] = readFileSync(ENDPOINTS_TSV, 'utf8')
    .split(/\r?\n/)
    .filter((l) => l.trim());
  assert.deepEqual(header?.split('\t'), ['method', 'path', 'kind', 'area'], 'endpoints.tsv columns');
  return lines.map((line) => {
    const [method = '', path = '', kind = '', area = ''] = line.split('\t').map((c) => c.trim());
    assert.ok(['specified', 'named', 'removed'].includes(kind), `unknown kind ${kind} in: ${line}`);
    return { method: method.toUpperCase(), path, kind: kind as Endpoint['kind'], area };
  });
}

/** `/users/:id`, `/api/v1/users/{id}` → `/users/{}`: parameter names may differ, places may not. */
function normalise(path: string): string {
  return (
    path
      .replace(/^\/api\/v1(?=\/)/, '')
      .replace(/\{[^}/]+\}/g, '{}')
      .replace(/:[^/]+/g, '{}')
      .replace(/\/+$/, '') || '/'
  );
}

describe('every endpoint of the spec is present (spec/endpoints.tsv)', { skip: missing }, () => {
  const server = useServer();
  let token: string;
  let documented: Set<string>;
  const values: Record<string, string> = { version: '1' };
  before(async () => {
    token = await server.adminToken();
    await createUser(server, { name: 'rita', email: 'rita@example.test' });
    const spec = await server.api('GET', '/openapi.json');
    assert.equal(spec.status, 200);
    documented = new Set(
      Object.entries(spec.body.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
        Object.keys(item).map((method) => `${method.toUpperCase()} ${normalise(path)}`),
      ),
    );
    // Real ids for the removed endpoints' parameters, so a 404 cannot come from an unknown id alone.
    const attachment = await upload(server, token, makePdf(), { name: 'annex.pdf' });
    const main = await upload(server, token, makePdf());
    const created = await server.api('POST', '/documents', {
      token,
      body: {
        body: { documentTitle: 'Endpoints', pdfFile: { content: main }, file: [{ content: attachment }] },
      },
    });
    assert.equal(created.status, 200, created.text);
    const shared = await server.api('POST', '/share', {
      token,
      body: { id: created.body.results[0].documentId, data: [{ sharePurpose: 'view', shareTo: 'rita' }] },
    });
    assert.equal(shared.status, 200, shared.text);
    Object.assign(values, {
      id: created.body.results[0].documentId,
      hash: attachment,
      shareId: shared.body[0].shareId,
    });
  });

  it('every `specified` and `named` endpoint appears in GET /api/v1/openapi.json (method and path)', () => {
    const wanted = readEndpoints().filter((e) => e.kind !== 'removed');
    assert.ok(wanted.length > 0);
    const absent = wanted
      .filter((e) => !documented.has(`${e.method} ${normalise(e.path)}`))
      .map((e) => `${e.method} ${e.path} (${e.kind}, ${e.area})`);
    assert.deepEqual(absent, [], `not in the OpenAPI document:\n${absent.join('\n')}`);
  });

  it('every `removed` endpoint answers 404 with the Contract’s JSON error and is not documented', async () => {
    const removed = readEndpoints().filter((e) => e.kind === 'removed');
    assert.ok(removed.length > 0);
    for (const endpoint of removed) {
      const path = endpoint.path.replace(/:([^/]+)/g, (_, name: string) => values[name] ?? 'x1');
      const what = `${endpoint.method} ${endpoint.path}`;
      const response = await server.api(endpoint.method, path, {
        token,
        ...(['POST', 'PUT', 'DELETE'].includes(endpoint.method) ? { body: {} } : {}),
      });
      assert.equal(response.status, 404, `${what} → ${response.status} ${response.text}`);
      assert.deepEqual(Object.keys(response.body).sort(), ['code', 'error', 'message', 'statusCode'], what);
      assert.equal(response.body.statusCode, 404, what);
      assert.equal(response.body.error, 'Not Found', what);
      assert.equal(response.body.code, 'NOT_FOUND', what);
      assert.equal(typeof response.body.message, 'string', what);
      assert.ok(!response.text.includes(token), `${what}: the error does not repeat the token`);
      assert.ok(
        !documented.has(`${endpoint.method} ${normalise(endpoint.path)}`),
        `${what} is not in the OpenAPI document`,
      );
    }
  });
});
