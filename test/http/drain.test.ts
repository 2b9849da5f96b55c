import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { ADMIN, startServer } from '../helpers/server.js';

/** A connection kept alive between requests, as a proxy keeps one to each node. */
interface KeptAlive {
  send(request: string): Promise<{ status: number; headers: Record<string, string>; body: string }>;
  /** Resolves when the server has closed the connection. */
  closed: Promise<void>;
  socket: Socket;
}

async function keptAlive(url: string): Promise<KeptAlive> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let buffered = Buffer.alloc(0);
  let waiting: (() => void) | undefined;
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    waiting?.();
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  const answer = async () => {
    for (;;) {
      const end = buffered.indexOf('\r\n\r\n');
      if (end >= 0) {
        const [statusLine = '', ...lines] = buffered.subarray(0, end).toString('latin1').split('\r\n');
        const headers = Object.fromEntries(
          lines.map((line) => [
            line.slice(0, line.indexOf(':')).toLowerCase(),
            line.slice(line.indexOf(':') + 1).trim(),
          ]),
        );
        const length = Number(headers['content-length'] ?? 0);
        if (buffered.length >= end + 4 + length) {
          const body = buffered.subarray(end + 4, end + 4 + length).toString('utf8');
          buffered = buffered.subarray(end + 4 + length);
          return { status: Number(statusLine.split(' ')[1]), headers, body };
        }
      }
      if (socket.destroyed) throw new Error('the server closed the connection without an answer');
      await Promise.race([new Promise<void>((resolve) => (waiting = resolve)), closed]);
    }
  };
  return {
    socket,
    closed,
    async send(request) {
      socket.write(request);
      return answer();
    },
  };
}

const host = (url: string) => new URL(url).host;
const refused = (url: string) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(Number(new URL(url).port), new URL(url).hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

describe('draining before a stop (SIGTERM, SHUTDOWN_DRAIN_SECONDS): a proxy never loses a request on a connection it kept alive', () => {
  it('new connections are refused at once; a request sent later on a connection kept alive from before is answered, with Connection: close; the drain ends when no connection is left', async () => {
    const server = await startServer();
    try {
      const connection = await keptAlive(server.url);
      const first = await connection.send(`GET /healthz HTTP/1.1\r\nHost: ${host(server.url)}\r\n\r\n`);
      assert.equal(first.status, 200);
      assert.notEqual(first.headers.connection, 'close', 'kept alive before the drain');

      let drained = false;
      const draining = server.app.drain(60_000).then(() => (drained = true));
      assert.equal(await refused(server.url), true, 'no new connection once draining');
      // Idle for longer than the 50 ms sweep of App.close: a plain close would have closed it by now.
      await sleep(300);
      assert.equal(drained, false, 'the drain waits for the connection the proxy still holds');
      const body = JSON.stringify({ name: ADMIN.name, password: ADMIN.password });
      const login = await connection.send(
        `POST /api/v1/login HTTP/1.1\r\nHost: ${host(server.url)}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      assert.equal(login.status, 200, login.body);
      assert.ok(JSON.parse(login.body).token, 'the POST was carried out');
      assert.equal(login.headers.connection, 'close', 'the proxy is told not to send more on it');
      await connection.closed;
      // A liveness check, not a speed target: the maximum is a minute.
      assert.equal(
        await Promise.race([draining.then(() => 'drained'), sleep(15_000).then(() => 'draining')]),
        'drained',
      );
    } finally {
      await server.close();
    }
  });

  it('while draining, /readyz answers 503 on a connection still open, so a balancer that checks health takes the node out', async () => {
    const server = await startServer();
    try {
      const connection = await keptAlive(server.url);
      const readyz = `GET /readyz HTTP/1.1\r\nHost: ${host(server.url)}\r\n\r\n`;
      assert.equal((await connection.send(readyz)).status, 200);
      const draining = server.app.drain(5_000);
      const during = await connection.send(readyz);
      assert.equal(during.status, 503, during.body);
      assert.equal(JSON.parse(during.body).code, 'UNAVAILABLE');
      await draining;
    } finally {
      await server.close();
    }
  });

  it('a connection still idle at the maximum does not hold the stop: the drain returns, and the close closes it', async () => {
    const server = await startServer();
    const connection = await keptAlive(server.url);
    assert.equal(
      (await connection.send(`GET /healthz HTTP/1.1\r\nHost: ${host(server.url)}\r\n\r\n`)).status,
      200,
    );
    await server.app.drain(200);
    assert.equal(connection.socket.destroyed, false, 'left to the proxy until the maximum');
    await server.close();
    await connection.closed;
  });
});
