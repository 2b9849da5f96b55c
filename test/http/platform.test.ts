import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN, dropSchema, startServer, TEST_DATABASE_URL } from '../helpers/server.js';
import { logChunks, logLines } from '../helpers/logs.js';
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
    const { stream, chunks: lines } = logChunks();
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

// DESIGN, decided in issue 37: "No credential ever travels in a URL that leaves the API: redirects
// carry none, and a token parameter is recognised after URL decoding, whatever its spelling."
describe('a token parameter is recognised after URL decoding, whatever its spelling', () => {
  const SPELLINGS = ['token', '%74oken', 'tok%65n', 'TOKEN', 'To%4Ben', '%54%4F%4B%45%4E'];

  it('every spelling authenticates as `token` does, GET /login echoes it, and no log line holds it', async () => {
    const { stream, chunks: lines } = logChunks();
    const server = await startServer({ logger: { level: 'info', stream } });
    try {
      const token = await server.login(ADMIN.name, ADMIN.password);
      for (const spelling of SPELLINGS) {
        const response = await fetch(`${server.url}/api/v1/login?${spelling}=${token}`);
        const body = (await response.json()) as { logged?: boolean; token?: string };
        assert.equal(response.status, 200, spelling);
        assert.equal(body.logged, true, spelling);
        assert.equal(body.token, token, `${spelling}: the token is echoed`);
      }
      // Two spellings naming different tokens: which caller is it? Neither.
      const two = await fetch(`${server.url}/api/v1/login?token=${token}&TOKEN=another-token`);
      assert.equal(two.status, 401);
      // A token inside an encoded redirect, in any spelling, is a token all the same.
      const inner = encodeURIComponent(`http://signery.test/app?%74oken=${token}`);
      await fetch(`${server.url}/api/v1/login/oidc/none?redirect=${inner}`);
      const log = lines.join('');
      assert.ok(log.includes('[REDACTED]'), 'the request lines are logged, cleaned');
      assert.ok(!log.includes(token), 'no log line holds the token');
    } finally {
      await server.close();
    }
  });

  it('a redirect the server answers never repeats a token of the request, whatever its spelling', async () => {
    const server = await startServer();
    try {
      const secret = 'a-token-that-must-not-be-repeated';
      for (const spelling of [...SPELLINGS, 'access_token', '%2574oken']) {
        // @fastify/swagger-ui answers its static index with a redirect to the URL it was asked.
        const response = await fetch(
          `${server.url}/api/v1/docs/static/index.html?${spelling}=${secret}&x=1`,
          {
            redirect: 'manual',
          },
        );
        assert.equal(response.status, 302, spelling);
        assert.equal(response.headers.get('location'), '/api/v1/docs/static/index.html?x=1', spelling);
      }
    } finally {
      await server.close();
    }
  });
});

describe('request log lines', () => {
  it('one line per request when it ends (its request with the URL cleaned, status, time), and one for a request its caller gave up on', async () => {
    const { stream, lines } = logLines();
    const server = await startServer({ logger: { level: 'info', stream } });
    try {
      const token = await server.login(ADMIN.name, ADMIN.password);
      await server.api('GET', '/login', { token, headers: { 'x-request-id': 'line-ok-1' } });
      await server.api('GET', '/documents/no-such-document', {
        token,
        headers: { 'x-request-id': 'line-404-1' },
      });
      // An upload whose caller goes away halfway through its body.
      const url = new URL(`${server.url}/api/v1/files/saveFile?token=${token}`);
      await new Promise<void>((resolve) => {
        const request = httpRequest(url, {
          method: 'POST',
          headers: {
            'x-request-id': 'line-gone-1',
            'content-type': 'multipart/form-data; boundary=xyz',
            'content-length': '100000',
          },
        });
        request.on('error', () => resolve());
        request.write(
          '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.7',
        );
        setTimeout(() => request.destroy(), 200);
      });
      const linesOf = async (id: string, count: number) => {
        for (let i = 0; i < 50 && lines.filter((line) => line.reqId === id).length < count; i++)
          await new Promise((resolve) => setTimeout(resolve, 20));
        return lines.filter((line) => line.reqId === id);
      };
      const [ok] = await linesOf('line-ok-1', 1);
      assert.equal(ok?.msg, 'request completed');
      assert.deepEqual(ok.req, {
        id: 'line-ok-1',
        method: 'GET',
        url: '/api/v1/login?token=[REDACTED]',
        remoteAddress: '127.0.0.1',
      });
      assert.deepEqual(ok.res, { statusCode: 200 });
      assert.equal(typeof ok.responseTime, 'number');
      const notFound = await linesOf('line-404-1', 1);
      assert.deepEqual(
        notFound.map((line) => [line.msg, (line.res as { statusCode: number }).statusCode]),
        [['request completed', 404]],
      );
      const gone = await linesOf('line-gone-1', 1);
      assert.deepEqual(
        gone.map((line) => [line.msg, (line.req as { url: string }).url]),
        [['request aborted', '/api/v1/files/saveFile?token=[REDACTED]']],
      );
      assert.equal(lines.filter((line) => line.msg === 'incoming request').length, 0);
      assert.equal(
        lines.filter((line) => line.reqId === 'line-ok-1').length,
        1,
        'one line for a request, not one when it comes and one when it ends',
      );
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
