import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';

interface Schema {
  type?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  description?: string;
  properties?: Record<string, Schema>;
}

/**
 * Issue 24, item 19: "Undocumented limits (`hmacSecret` ≥ 16 characters, `scroll.timeout` an integer)
 * go into the OpenAPI description, or go away." Each limit the API enforces is in GET /openapi.json,
 * as a schema keyword and in the words a reader sees, and the API enforces exactly that.
 */
describe('spec: the limits the API enforces are the ones its OpenAPI description states', () => {
  let server: TestServer;
  let admin: string;
  let openapi: {
    paths: Record<
      string,
      Record<string, { requestBody?: { content: Record<string, { schema: Schema }> }; description?: string }>
    >;
  };
  before(async () => {
    server = await startServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    admin = await server.adminToken();
    openapi = (await server.api('GET', '/openapi.json')).body;
  });
  after(() => server.close());

  const body = (path: string, method: string): Schema => {
    const schema =
      openapi.paths[`/api/v1${path}`]?.[method]?.requestBody?.content['application/json']?.schema;
    assert.ok(schema, `${method.toUpperCase()} ${path} has a JSON body schema`);
    return schema;
  };

  it('`hmacSecret` chosen by the integrator: 16 to 256 characters, stated at creation and at rotation, enforced at both', async () => {
    for (const [path, method] of [
      ['/webhooks', 'post'],
      ['/webhooks/{webhookId}/secret', 'post'],
    ] as const) {
      const secret = body(path, method).properties?.hmacSecret;
      assert.equal(secret?.minLength, 16, `${path} hmacSecret minLength`);
      assert.equal(secret?.maxLength, 256, `${path} hmacSecret maxLength`);
      assert.match(secret?.description ?? '', /16 to 256 characters/);
    }
    const create = (hmacSecret: string) =>
      server.api('POST', '/webhooks', {
        token: admin,
        body: { type: 'tenant', callbackUrl: 'http://127.0.0.1:9/hook', hmacSecret },
      });
    const short = await create('x'.repeat(15));
    assert.equal(short.status, 400, short.text);
    assert.equal(short.body.code, 'VALIDATION_ERROR');
    assert.match(short.body.message, /hmacSecret/);
    const long = await create('x'.repeat(257));
    assert.equal(long.status, 400, long.text);
    const shortest = await create('x'.repeat(16));
    assert.equal(shortest.status, 200, shortest.text);
    const rotate = (hmacSecret: string) =>
      server.api('POST', `/webhooks/${shortest.body.id}/secret`, { token: admin, body: { hmacSecret } });
    assert.equal((await rotate('y'.repeat(15))).status, 400);
    assert.equal((await rotate('y'.repeat(256))).status, 200);
  });

  it('`scroll.timeout`: a number of seconds from 1 to 3600 (the spec types it number: 1.5 is 1.5 s), stated for POST /search/reports and /logs/search, enforced', async () => {
    const stated = [
      body('/search/reports', 'post').properties?.query?.properties?.scroll?.properties?.timeout,
      body('/logs/search', 'post').properties?.scroll?.properties?.timeout,
    ];
    for (const timeout of stated) {
      assert.ok(timeout, 'scroll.timeout is stated');
      assert.equal(timeout.type, 'number');
      assert.equal(timeout.minimum, 1);
      assert.equal(timeout.maximum, 3600);
      assert.match(timeout.description ?? '', /a number from 1 to 3600/);
    }
    const reports = (timeout: number) =>
      server.api('POST', '/search/reports', {
        token: admin,
        body: { query: { size: 1, scroll: { timeout } } },
      });
    const logs = (timeout: number) =>
      server.api('POST', '/logs/search', {
        token: admin,
        body: { logsQuery: { size: 1 }, scroll: { timeout } },
      });
    for (const search of [reports, logs]) {
      for (const refused of [0.5, 0, 3600.5, 3601]) {
        const answer = await search(refused);
        assert.equal(answer.status, 400, `timeout ${refused}: ${answer.text}`);
        assert.equal(answer.body.code, 'VALIDATION_ERROR');
        assert.match(answer.body.message, /timeout/);
      }
      for (const accepted of [1, 1.5, 3600]) {
        const answer = await search(accepted);
        assert.equal(answer.status, 200, `timeout ${accepted}: ${answer.text}`);
      }
    }
  });

  it('a recipient stamp’s `name`: 1 to 200 characters, stated in POST /share/upload/stamp', () => {
    const route = openapi.paths['/api/v1/share/upload/stamp']?.post;
    assert.match(route?.description ?? '', /optional `name` \(1 to 200 characters, 400 otherwise\)/);
  });
});
