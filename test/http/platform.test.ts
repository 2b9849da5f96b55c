import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { ADMIN, dropSchema, startServer, TEST_DATABASE_URL } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';

describe('health, OpenAPI, docs and metrics', () => {
  const server = useServer();

  it('GET /healthz and GET /api/v1/ping answer 200; GET /readyz checks the database and blob store', async () => {
    assert.equal((await server.api('GET', '//healthz')).status, 200);
    assert.equal((await server.api('GET', '/ping')).status, 200);
    const ready = await server.api('GET', '//readyz');
    assert.equal(ready.status, 200);
    assert.equal(ready.body.database, 'ok');
    assert.equal(ready.body.blobs, 'ok');
  });

  it('GET /api/v1/openapi.json is generated from the route schemas and documents the token; /api/v1/docs serves a page', async () => {
    const spec = await server.api('GET', '/openapi.json');
    assert.equal(spec.status, 200);
    assert.equal(spec.body.openapi, '3.1.0');
    for (const path of [
      '/api/v1/login',
      '/api/v1/users',
      '/api/v1/users/{id}',
      '/api/v1/api/key/{token}',
      '/api/v1/groups/search',
    ]) {
      assert.ok(spec.body.paths[path], `${path} documented`);
    }
    assert.ok(spec.body.paths['/api/v1/users'].post.requestBody);
    const { type, in: where, name } = spec.body.components.securitySchemes.token;
    assert.deepEqual(
      { type, in: where, name },
      {
        type: 'apiKey',
        in: 'query',
        name: 'token',
      },
    );
    const docs = await fetch(`${server.url}/api/v1/docs`, { redirect: 'follow' });
    assert.equal(docs.status, 200);
    assert.match(await docs.text(), /swagger/i);
  });

  it('GET /metrics counts requests per route template with latency histograms, never concrete ids', async () => {
    const token = await server.adminToken();
    await server.api('GET', '/users/some-id-123', { token });
    const metrics = await fetch(`${server.url}/metrics`).then((r) => r.text());
    assert.match(
      metrics,
      /signery_http_requests_total\{method="POST",route="\/api\/v1\/login",status_code="200"\} \d+/,
    );
    assert.match(
      metrics,
      /signery_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/api\/v1\/users\/:id"/,
    );
    assert.ok(!metrics.includes('some-id-123'));
    assert.ok(!metrics.includes(token));
  });
});

describe('logs never hold tokens, keys or passwords', () => {
  it('the token query parameter, API keys in paths and passwords are redacted', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const server = await startServer({ logger: { level: 'info', stream } });
    try {
      const token = await server.login(ADMIN.name, ADMIN.password);
      const key = (await server.api('POST', '/api/key', { token, body: {} })).body.id as string;
      await server.api('GET', '/login', { token });
      await server.api('GET', '/login', { token: key });
      await server.api('DELETE', `/api/key/${key}`);
      await server.api('POST', '/login', { body: { name: ADMIN.name, password: 'wrong-password-here' } });
      // A share token inside another parameter (an encoded redirect back to the signer's page).
      const shareToken = `shr_${'A'.repeat(43)}`;
      await server.api('GET', '/share/oidc/none', {
        query: { redirect: `http://sign.example.test/s/${shareToken}` },
      });
      const log = lines.join('');
      assert.ok(!log.includes(shareToken), 'a share token in a parameter is redacted');
      assert.ok(log.includes('token=[REDACTED]'), 'the request line is logged, cleaned');
      assert.ok(log.includes('/api/key/[REDACTED]'));
      for (const secret of [token, key, key.slice(17), ADMIN.password, 'wrong-password-here']) {
        assert.ok(!log.includes(secret), `log holds a secret: ${secret.slice(0, 6)}…`);
      }
    } finally {
      await server.close();
    }
  });
});

describe('graceful shutdown', () => {
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'signery-shutdown-'));
  });
  after(() => rm(dataDir, { recursive: true, force: true }));

  it('SIGTERM lets the process finish and exit 0 after the server has been serving', async () => {
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      // The drain waits this long for the test's kept-alive connection (fetch keeps it), then closes it.
      SHUTDOWN_DRAIN_SECONDS: '1',
      ...(TEST_DATABASE_URL
        ? { DATABASE_URL: TEST_DATABASE_URL, DATABASE_SCHEMA: `t_shutdown_${process.pid}` }
        : {}),
    };
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const listening = new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
        if (match?.[1]) resolve(match[1]);
      });
      child.once('exit', (code) => reject(new Error(`exited early with ${code}: ${output}`)));
    });
    const url = await listening;
    assert.equal((await fetch(`${url}/healthz`)).status, 200);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.match(output, /shutting down/);
    if (TEST_DATABASE_URL) await dropSchema(`t_shutdown_${process.pid}`);
  });
});
