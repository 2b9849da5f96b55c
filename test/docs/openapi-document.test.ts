import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { useServer } from '../helpers/use-server.js';
import { exampleProblems, operationsOf, schemaValidator, type OpenApiDocument } from './openapi-walk.js';

/**
 * Issue 25, "the first hour of an integrator": the OpenAPI description is the first thing an
 * integrator reads and what the typed client (clients/typescript) is generated from. "Every operation
 * has its 2xx response schema and at least one request and response example; descriptions speak to
 * integrators (no internal cross-references); Authorize offers the Bearer header too."
 */
describe('the OpenAPI description (GET /api/v1/openapi.json)', () => {
  const server = useServer();
  let document: OpenApiDocument;
  before(async () => {
    document = (await server.api('GET', '/openapi.json')).body as OpenApiDocument;
  });

  it('every operation documents the body of its 2xx answer (a redirect, its Location header)', () => {
    const missing = operationsOf(document)
      .filter(({ operation }) => {
        const answers = Object.entries(operation.responses ?? {});
        const success = answers.filter(([status]) => /^2/.test(status));
        if (success.length > 0) {
          return !success.every(([, answer]) =>
            Object.values(answer.content ?? {}).some((media) => media.schema !== undefined),
          );
        }
        // The sign-in starts answer the browser with a redirect to the identity provider, never a body.
        const redirects = answers.filter(([status]) => /^3/.test(status));
        return !(redirects.length > 0 && redirects.every(([, answer]) => answer.headers?.location));
      })
      .map(({ key }) => key);
    assert.deepEqual(missing, [], `operations without a documented 2xx answer: ${missing.length}`);
  });

  it('every request body and every 2xx answer has an example, and each example fits its schema', () => {
    const validate = schemaValidator(document);
    const problems = operationsOf(document).flatMap((operation) => exampleProblems(validate, operation));
    assert.deepEqual(problems, [], `${problems.length} problems with examples`);
  });

  it('descriptions speak to integrators: no references to documents they do not have', () => {
    // The project's own notes (the spec's numbered rules, DESIGN's Contract, issues) are not published:
    // an integrator reading "(spec Files, usage rule 8)" learns nothing. Say the rule instead.
    const internal = [
      /\bspec\b/,
      /\bContract\b/,
      /\bDESIGN\b/,
      /\bissue \d+/i,
      /\busage rules?\b/i,
      /\brules? \d+\b/,
      /\bVersioning \d/,
    ];
    const found = new Set<string>();
    const walk = (node: unknown, path: string): void => {
      if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${path}[${i}]`));
      if (node === null || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node)) {
        if ((key === 'description' || key === 'summary') && typeof value === 'string') {
          for (const pattern of internal) {
            const match = pattern.exec(value);
            if (match)
              found.add(`${path}: …${value.slice(Math.max(0, match.index - 30), match.index + 40)}…`);
          }
        } else walk(value, `${path}.${key}`);
      }
    };
    walk(document, '');
    assert.deepEqual([...found], []);
  });

  it('Authorize offers the Bearer header beside the token parameter and the cookie', () => {
    const schemes = document.components?.securitySchemes ?? {};
    const bearer = Object.entries(schemes).find(
      ([, scheme]) => scheme.type === 'http' && scheme.scheme === 'bearer',
    );
    assert.ok(bearer, 'an http bearer security scheme');
    const offered = (document.security ?? []).flatMap((requirement) => Object.keys(requirement));
    assert.ok(offered.includes(bearer[0]), 'the bearer scheme is one of the ways to call the API');
    assert.ok(offered.includes('token') && offered.includes('cookie'));
  });

  it('the calls made without a credential say so (login, health, identity-provider sign-in)', () => {
    const open = operationsOf(document)
      .filter(({ operation }) => Array.isArray(operation.security) && operation.security.length === 0)
      .map(({ key }) => key);
    for (const key of [
      'POST /api/v1/login',
      'GET /healthz',
      'GET /api/v1/login/oidc',
      'PUT /api/v1/users/activate',
    ])
      assert.ok(open.includes(key), `${key} asks for no credential`);
    assert.ok(!open.includes('POST /api/v1/documents'));
  });

  // Issue 41, "an OpenAPI document SDK generators love".
  it('every operation has an operationId: unique, verb-noun in camelCase (generated SDKs name their methods after it)', () => {
    const operations = operationsOf(document);
    const missing = operations.filter(({ operation }) => !operation.operationId).map(({ key }) => key);
    assert.deepEqual(missing, []);
    const malformed = operations
      .filter(({ operation }) => !/^[a-z][A-Za-z]+$/.test(operation.operationId!))
      .map(({ key, operation }) => `${key}: ${operation.operationId}`);
    assert.deepEqual(malformed, []);
    const seen = new Map<string, string>();
    const repeated: string[] = [];
    for (const { key, operation } of operations) {
      const other = seen.get(operation.operationId!);
      if (other) repeated.push(`${operation.operationId}: ${other} and ${key}`);
      seen.set(operation.operationId!, key);
    }
    assert.deepEqual(repeated, []);
    assert.equal(document.paths['/api/v1/share']?.post?.operationId, 'createShare');
    assert.equal(document.paths['/api/v1/documents/{documentId}']?.get?.operationId, 'getDocument');
  });

  it('every tag an operation uses is declared at the top, with a description', () => {
    const declared = new Map((document.tags ?? []).map((tag) => [tag.name, tag.description]));
    const used = new Set(operationsOf(document).flatMap(({ operation }) => operation.tags ?? []));
    assert.ok(used.size > 0);
    assert.deepEqual(
      [...used].filter((tag) => !declared.has(tag)),
      [],
      'tags used but not declared',
    );
    assert.deepEqual(
      [...declared].filter(([, description]) => !description).map(([name]) => name),
      [],
    );
  });

  it('a body the call may go without is documented as not required; every other body as required', () => {
    const optional = operationsOf(document)
      .filter(({ operation }) => operation.requestBody?.required === false)
      .map(({ key }) => key)
      .sort();
    assert.deepEqual(optional, [
      'POST /api/v1/agent-actions/{id}/reject',
      'POST /api/v1/api/key',
      'POST /api/v1/groups/search',
      'POST /api/v1/share/otp',
    ]);
  });

  it('one parameter name per path position: paths that differ only in a parameter name do not exist', () => {
    // `/documents/{documentId}` and `/documents/{version}` are "equivalent paths" to OpenAPI (an error).
    const names = new Map<string, { name: string; path: string }>();
    const clashes: string[] = [];
    for (const path of Object.keys(document.paths)) {
      const segments = path.split('/');
      segments.forEach((segment, i) => {
        const parameter = /^\{(.+)\}$/.exec(segment)?.[1];
        if (!parameter) return;
        // The same literal prefix with a parameter at the same position.
        const position = segments
          .slice(0, i)
          .map((s) => (s.startsWith('{') ? '{}' : s))
          .join('/');
        const seen = names.get(position);
        if (seen && seen.name !== parameter)
          clashes.push(`${seen.path} {${seen.name}} and ${path} {${parameter}}`);
        if (!seen) names.set(position, { name: parameter, path });
      });
    }
    assert.deepEqual(clashes, []);
  });

  it('every answer documents X-Request-Id; rate-limited calls RateLimit-Policy and RateLimit; 429 and 503 Retry-After', () => {
    const headers = document.components?.headers ?? {};
    for (const name of ['X-Request-Id', 'RateLimit-Policy', 'RateLimit', 'Retry-After'])
      assert.ok(headers[name]?.description, `components.headers.${name}`);
    const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
    const problems: string[] = [];
    for (const { key, operation } of operationsOf(document)) {
      const probe = ['GET /healthz', 'GET /readyz', 'GET /api/v1/ping'].includes(key);
      for (const [status, answer] of Object.entries(operation.responses ?? {})) {
        const has = (name: string) => JSON.stringify(answer.headers?.[name]) === JSON.stringify(ref(name));
        if (!has('X-Request-Id')) problems.push(`${key} ${status}: X-Request-Id`);
        if (!probe && !(has('RateLimit-Policy') && has('RateLimit')))
          problems.push(`${key} ${status}: RateLimit`);
        if ((status === '429' || status === '503') && !has('Retry-After'))
          problems.push(`${key} ${status}: Retry-After`);
      }
      if (!probe && !operation.responses?.['429']) problems.push(`${key}: no 429`);
      if (!operation.responses?.['503']) problems.push(`${key}: no 503`);
    }
    assert.deepEqual(problems, []);
  });

  it('file downloads name their real media types (PDF, PNG, ZIP…), not only application/octet-stream', () => {
    const typesOf = (path: string, status = '200') =>
      Object.keys(document.paths[path]?.get?.responses?.[status]?.content ?? {}).sort();
    assert.deepEqual(typesOf('/api/v1/documents/{documentId}/audit'), ['application/pdf']);
    assert.deepEqual(typesOf('/api/v1/attachments/{id}/zip'), ['application/zip']);
    assert.deepEqual(typesOf('/api/v1/share/signed'), ['application/pdf']);
    assert.deepEqual(typesOf('/api/v1/stamps/{id}/image'), ['image/jpeg', 'image/png']);
    const download = typesOf('/api/v1/files/loadFile/hash/{hash}');
    for (const type of ['application/pdf', 'image/png', 'image/jpeg', 'application/zip'])
      assert.ok(download.includes(type), `GET /files/loadFile/hash answers ${type}`);
    assert.deepEqual(typesOf('/api/v1/files/loadFile/hash/{hash}', '206'), download);
  });

  it('request examples never expire: a validity end in an example is decades ahead', () => {
    const soon = new Date();
    soon.setUTCFullYear(soon.getUTCFullYear() + 50);
    const expiring: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${where}[${i}]`));
      if (node === null || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node)) {
        if (/until|expir/i.test(key) && typeof value === 'string' && !Number.isNaN(Date.parse(value))) {
          if (new Date(value) < soon) expiring.push(`${where}.${key}: ${value}`);
        } else walk(value, `${where}.${key}`);
      }
    };
    for (const { key, operation } of operationsOf(document))
      for (const media of Object.values(operation.requestBody?.content ?? {}))
        walk([media.example, media.examples, media.schema?.examples], key);
    assert.deepEqual(expiring, []);
  });
});
