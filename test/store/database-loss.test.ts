import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { startServer, TEST_DATABASE_URL, type TestServer } from '../helpers/server.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const ON_SQLITE = 'the embedded SQLite file has no connections to lose';

/** The PostgreSQL server processes serving connections that came through the proxy. */
async function backendsBehind(proxy: TcpProxy): Promise<number[]> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      'select pid from pg_stat_activity where client_port = any($1::int[])',
      [proxy.upstreamPorts()],
    );
    return rows.map((r) => r.pid);
  } finally {
    await client.end();
  }
}

async function terminate(pids: number[]): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query('select pg_terminate_backend(pid) from unnest($1::int[]) as pid', [pids]);
  } finally {
    await client.end();
  }
}

describe(
  'a node outlives its database connections (Operations: a node survives losing its database)',
  {
    skip: TEST_DATABASE_URL ? false : ON_SQLITE,
  },
  () => {
    let proxy: TcpProxy;
    let server: TestServer;
    let token: string;

    before(async () => {
      const target = new URL(TEST_DATABASE_URL!);
      proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      const url = new URL(TEST_DATABASE_URL!);
      url.port = String(proxy.port);
      // A one-second statement time-out: a connection silent for three seconds is taken for dead.
      server = await startServer({
        env: { DATABASE_URL: url.toString(), DATABASE_STATEMENT_TIMEOUT_MS: '1000' },
      });
      token = await server.adminToken();
    });
    after(async () => {
      await server?.close();
      await proxy?.close();
    });

    it('keeps serving after PostgreSQL terminates every connection it holds (pg_terminate_backend)', async () => {
      assert.equal((await server.api('GET', '/login', { token })).status, 200);
      const pids = await backendsBehind(proxy);
      assert.ok(pids.length > 0, 'the node holds connections');
      await terminate(pids);
      // The process is still here (an unhandled connection error would have ended it). A request
      // that meets a connection before the pool has noticed its end may be 503 (send it again),
      // never 500; the node recovers by itself.
      let answer = await server.api('GET', '/login', { token });
      for (let tries = 0; answer.status === 503 && tries < 20; tries++) {
        assert.equal(answer.body.code, 'UNAVAILABLE');
        await new Promise((resolve) => setTimeout(resolve, 50));
        answer = await server.api('GET', '/login', { token });
      }
      assert.equal(answer.status, 200, answer.text);
      for (let i = 0; i < 5; i++) assert.equal((await server.api('GET', '/login', { token })).status, 200);
      assert.equal((await server.api('GET', '//readyz')).status, 200);
    });

    it('answers 503 while it cannot reach the database and recovers by itself when it can', async () => {
      proxy.refuse();
      const down = await server.api('GET', '/login', { token });
      assert.equal(down.status, 503, down.text);
      assert.equal(down.body.code, 'UNAVAILABLE');
      assert.ok(down.headers.get('retry-after'), 'Retry-After tells clients when to come back');
      const notReady = await server.api('GET', '//readyz');
      assert.equal(notReady.status, 503);
      assert.equal(notReady.body.database, 'unavailable');

      proxy.restore();
      const up = await server.api('GET', '/login', { token });
      assert.equal(up.status, 200, up.text);
      assert.equal((await server.api('GET', '//readyz')).status, 200);
    });

    it('answers readiness during a partition instead of hanging (connections that forward nothing)', async () => {
      proxy.blackhole();
      try {
        // Without time-outs this request would wait for TCP to give up (minutes): the test's own
        // time-out would fail it.
        const notReady = await server.api('GET', '//readyz');
        assert.equal(notReady.status, 503);
        assert.equal(notReady.body.database, 'unavailable');
      } finally {
        // The partition ends as they do: the connections caught in it are reset, new ones forward.
        proxy.refuse();
        proxy.restore();
      }
      const answer = await server.api('GET', '/login', { token });
      assert.equal(answer.status, 200, answer.text);
    });

    it('answers 503 to a request that lands on a silently dead pooled connection, and drops it', async () => {
      assert.equal(
        (await server.api('GET', '/login', { token })).status,
        200,
        'the pool holds live connections',
      );
      const before = await backendsBehind(proxy);
      proxy.blackhole();
      let answer;
      try {
        // Without a deadline on the connection this request would wait for TCP to give up (many
        // minutes): the test's own time-out would fail it.
        answer = await server.api('GET', '/login', { token });
      } finally {
        proxy.restore();
      }
      assert.equal(answer.status, 503, answer.text);
      assert.equal(answer.body.code, 'UNAVAILABLE');
      assert.ok(answer.headers.get('retry-after'));
      // The dead connection was dropped, not given back to the pool: the next requests succeed.
      for (let i = 0; i < 5; i++) assert.equal((await server.api('GET', '/login', { token })).status, 200);
      const after = await backendsBehind(proxy);
      assert.ok(
        before.some((pid) => !after.includes(pid)),
        'the connection caught in the partition is no longer in use',
      );
    });
  },
);
