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
});
