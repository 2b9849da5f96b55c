import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { useServer } from '../helpers/use-server.js';

describe('validation text in the spec’s form and the Contract’s error shape', () => {
  const server = useServer();
  let token: string;
  before(async () => (token = await server.adminToken()));

  function assertError(
    response: { status: number; body: Record<string, unknown> },
    status: number,
    code: string,
  ) {
    assert.equal(response.status, status, JSON.stringify(response.body));
    assert.deepEqual(Object.keys(response.body).sort(), ['code', 'error', 'message', 'statusCode']);
    assert.equal(response.body.statusCode, status);
    assert.equal(response.body.code, code);
  }

  const cases: [string, string, unknown, string][] = [
    ['unknown body key', '/users', { name: 'a', password: 'password-1', foo: 1 }, '"foo" is not allowed'],
    ['missing key', '/users', { password: 'password-1' }, '"name" is required'],
    ['wrong type', '/users', { name: 42 }, '"name" must be a string'],
    [
      'too short',
      '/users',
      { name: 'ab', password: 'short' },
      '"password" length must be at least 8 characters long',
    ],
    ['enum', '/users', { name: 'ab', role: 'emperor' }, '"role" must be one of ['],
    ['email format', '/users', { name: 'ab', email: 'nope' }, '"email" must be a valid email'],
    ['array item', '/users', { name: 'ab', rights: ['fly'] }, '"rights[0]" must be one of ['],
    ['nested index', '/users', [{ name: 'ok-name' }, { name: 'x', bar: true }], '"[1].bar" is not allowed'],
    ['out of range', '/groups/search', { size: 5000 }, '"size" must be less than or equal to 1000'],
    ['below range', '/groups/search', { from: -1 }, '"from" must be greater than or equal to 0'],
    ['integer', '/groups/search', { size: 1.5 }, '"size" must be an integer'],
    ['boolean', '/groups/search', { includeUserCount: 'yes' }, '"includeUserCount" must be a boolean'],
    ['object', '/groups/search', [1], '"value" must be of type object'],
  ];
  for (const [what, path, body, expected] of cases) {
    it(`BODY ERRORS: ${what} → 400 VALIDATION_ERROR "${expected}"`, async () => {
      const response = await server.api('POST', path, { token, body });
      assertError(response, 400, 'VALIDATION_ERROR');
      assert.ok(
        String(response.body.message).startsWith(`Request validation errors: BODY ERRORS: ${expected}`),
        String(response.body.message),
      );
    });
  }

  it('QUERY ERRORS and PARAMS ERRORS use the same form', async () => {
    const query = await server.api('GET', '/login', { token, query: { returnToken: 'maybe' } });
    assertError(query, 400, 'VALIDATION_ERROR');
    assert.equal(
      query.body.message,
      'Request validation errors: QUERY ERRORS: "returnToken" must be a boolean',
    );
    const unknownQuery = await server.api('GET', '/login', { token, query: { bogus: '1' } });
    assert.equal(
      unknownQuery.body.message,
      'Request validation errors: QUERY ERRORS: "bogus" is not allowed',
    );
    const params = await server.api('DELETE', `/api/key/${'k'.repeat(300)}`, { token });
    assertError(params, 400, 'VALIDATION_ERROR');
    assert.equal(
      params.body.message,
      'Request validation errors: PARAMS ERRORS: "token" length must be less than or equal to 200 characters long',
    );
  });

  it('malformed JSON, an empty JSON body and a wrong content type get JSON errors, not 500', async () => {
    assertError(
      await server.api('POST', '/users', {
        token,
        rawBody: '{"name":',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'VALIDATION_ERROR',
    );
    assertError(
      await server.api('POST', '/login', { rawBody: '', headers: { 'content-type': 'application/json' } }),
      400,
      'VALIDATION_ERROR',
    );
    assertError(
      await server.api('POST', '/login', { rawBody: 'name=a', headers: { 'content-type': 'text/csv' } }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    assertError(
      await server.api('POST', '/login', {
        rawBody: JSON.stringify({ name: 'x'.repeat(11 * 1024 * 1024) }),
        headers: { 'content-type': 'application/json' },
      }),
      413,
      'LIMIT_EXCEEDED',
    );
  });

  it('DESIGN Errors: "415 UNSUPPORTED_MEDIA_TYPE, a body whose Content-Type the route does not take (`message` names the types it takes)"', async () => {
    // curl -d '{...}' sends JSON as application/x-www-form-urlencoded unless told otherwise.
    const curlDefault = { 'content-type': 'application/x-www-form-urlencoded' };
    const jsonRoute = await server.api('POST', '/groups/search', {
      token,
      rawBody: '{"size":5}',
      headers: curlDefault,
    });
    assertError(jsonRoute, 415, 'UNSUPPORTED_MEDIA_TYPE');
    assert.equal(
      jsonRoute.body.message,
      'Unsupported Content-Type: this endpoint takes application/json (send the header Content-Type: application/json)',
    );
    const login = await server.api('POST', '/login', {
      rawBody: 'name=a',
      headers: { 'content-type': 'text/csv' },
    });
    assertError(login, 415, 'UNSUPPORTED_MEDIA_TYPE');
    assert.match(login.body.message as string, /takes application\/json/);
    // An upload route takes multipart/form-data, whether the body came as a form or as JSON.
    for (const [headers, rawBody] of [
      [curlDefault, 'file=x'],
      [{ 'content-type': 'application/json' }, '{"file":"x"}'],
    ] as const) {
      const upload = await server.api('POST', '/files/saveFile', { token, rawBody, headers });
      assertError(upload, 415, 'UNSUPPORTED_MEDIA_TYPE');
      assert.equal(
        upload.body.message,
        'Unsupported Content-Type: this endpoint takes multipart/form-data (send the header Content-Type: multipart/form-data)',
      );
    }
  });

  it('unknown routes answer a JSON 404 that does not repeat the URL or the token', async () => {
    const response = await server.api('GET', '/no/such/thing', { token });
    assertError(response, 404, 'NOT_FOUND');
    assert.ok(!response.text.includes('no/such'));
    assert.ok(!response.text.includes(token));
  });

  it('the endpoints the spec lists as removed answer 404', async () => {
    const removed: [string, string][] = [
      ['DELETE', '/attachments/draft/d1/h1/1'],
      ['GET', '/attachments/d1/count'],
      ['GET', '/attachments/draft/d1/count'],
      ['GET', '/attachments/main/d1'],
      ['PUT', '/attachments/draft/d1/h1'],
      ['POST', '/share/upload/attachment'],
      ['PUT', '/share/s1/recipient'],
    ];
    for (const [method, path] of removed) {
      assertError(await server.api(method, path, { token }), 404, 'NOT_FOUND');
    }
  });

  it('nothing answers 500 to bad input: every route with hostile bodies, queries and ids', async () => {
    const spec = await server.api('GET', '/openapi.json');
    // An API key survives GET /logout (which only ends sessions), so every route is reached authenticated.
    const key = (await server.api('POST', '/api/key', { token, body: {} })).body.id;
    const hostile: unknown[] = [
      null,
      0,
      'x',
      [],
      {},
      { __proto__: { admin: true } },
      { constructor: 1 },
      [{}],
      { name: {} },
      { status: null },
    ];
    for (const [path, methods] of Object.entries(
      spec.body.paths as Record<string, Record<string, unknown>>,
    )) {
      const concrete = path.replace('/api/v1', '').replace(/\{[^}]+\}/g, '%27%22%3Cx%3E');
      for (const method of Object.keys(methods)) {
        for (const body of hostile) {
          const m = method.toUpperCase();
          const response = await server.api(m, concrete, {
            token: key,
            query: { returnToken: '{}', from: '-1' },
            ...(m === 'GET' || m === 'HEAD'
              ? {}
              : { rawBody: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
          });
          assert.ok(
            response.status < 500,
            `${m} ${concrete} ${JSON.stringify(body)} → ${response.status} ${response.text}`,
          );
          if (response.status >= 400) assert.equal(typeof response.body.code, 'string', `${m} ${concrete}`);
        }
      }
    }
  });
});
