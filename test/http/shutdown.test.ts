import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import type { DatabaseHandle } from '../../src/store/db/dialect.js';
import { openPostgres } from '../../src/store/db/postgres/postgres-database.js';
import type { Database } from '../../src/store/db/schema.js';
import { openSqlite } from '../../src/store/db/sqlite/sqlite-database.js';
import { enqueue } from '../../src/jobs/queue.js';
import { makePdf } from '../helpers/pdf.js';
import { makeStore, TEST_DATABASE_URL, type TestStore } from '../helpers/server.js';
import { waitFor } from '../webhooks/helpers.js';
import { logIn, serverEnv, spawnServer, type ServerProcess } from '../webhooks/processes.js';

/** A request written by hand on a socket of its own, its answer read as it comes. */
interface RawExchange {
  socket: Socket;
  write(bytes: string | Buffer): void;
  /** The whole answer (head and body) once the server has closed the connection or sent it all. */
  answer: Promise<{ status: number; headers: Record<string, string>; body: string }>;
}

function rawExchange(url: string): Promise<RawExchange> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let received = Buffer.alloc(0);
  const answer = new Promise<{ status: number; headers: Record<string, string>; body: string }>(
    (resolve, reject) => {
      const parse = () => {
        const end = received.indexOf('\r\n\r\n');
        if (end < 0) return undefined;
        const [statusLine = '', ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
        const headers = Object.fromEntries(
          lines.map((line) => [
            line.slice(0, line.indexOf(':')).toLowerCase(),
            line.slice(line.indexOf(':') + 1).trim(),
          ]),
        );
        const length = Number(headers['content-length'] ?? Number.NaN);
        const body = received.subarray(end + 4);
        if (!(body.length >= length)) return undefined;
        return { status: Number(statusLine.split(' ')[1]), headers, body: body.toString('utf8') };
      };
      socket.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        const parsed = parse();
        if (parsed) resolve(parsed);
      });
      socket.on('error', () => undefined);
      socket.once('close', () => {
        const parsed = parse();
        if (parsed) resolve(parsed);
        else
          reject(new Error(`the connection closed without a whole answer: ${received.toString('latin1')}`));
      });
    },
  );
  answer.catch(() => undefined);
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve({ socket, write: (bytes) => socket.write(bytes), answer }));
    socket.once('error', reject);
  });
}

/**
 * An upload of a PDF to POST /files/saveFile whose body is sent in two halves: the headers and the
 * first half now, the rest when `finish()` is called (or never).
 */
async function slowUpload(url: string, token: string): Promise<RawExchange & { finish(): void }> {
  const boundary = `----signery${randomUUID().replaceAll('-', '')}`;
  const pdf = makePdf({ pages: 3 });
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.pdf"\r\n` +
      `Content-Type: application/pdf\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const body = Buffer.concat([head, pdf, tail]);
  const half = head.length + Math.floor(pdf.length / 2);
  const exchange = await rawExchange(url);
  exchange.write(
    `POST /api/v1/files/saveFile?token=${encodeURIComponent(token)} HTTP/1.1\r\n` +
      `Host: ${new URL(url).host}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n` +
      `Content-Length: ${body.length}\r\n\r\n`,
  );
  exchange.write(body.subarray(0, half));
  return { ...exchange, finish: () => exchange.write(body.subarray(half)) };
}

/** The server's database, opened beside it (as a second node would). */
async function openServerDatabase(store: TestStore): Promise<DatabaseHandle<Database>> {
  return TEST_DATABASE_URL && store.schema
    ? openPostgres({ url: TEST_DATABASE_URL, schema: store.schema })
    : openSqlite({ file: join(store.dataDir, 'signery.db') });
}

/** A job that does nothing when it runs (no bytes to remove): only its row says whether it ran. */
async function enqueueHarmlessJob(db: DatabaseHandle<Database>): Promise<string> {
  const now = new Date();
  const job = await enqueue(db.db, {
    type: 'files.removeBytes',
    payload: { sha256s: [], writtenBefore: now.toISOString() },
    now,
  });
  return job.id;
}

async function jobRow(db: DatabaseHandle<Database>, id: string) {
  const row = await db.db
    .selectFrom('jobs')
    .select(['status', 'attempts', 'locked_by'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return { status: row.status, attempts: Number(row.attempts), lockedBy: row.locked_by };
}

function exitCode(server: ServerProcess): Promise<number | null> {
  if (server.child.exitCode !== null) return Promise.resolve(server.child.exitCode);
  return new Promise((resolve) => server.child.once('exit', (code) => resolve(code)));
}

const shuttingDown = (server: ServerProcess) => () =>
  server.output().includes('shutting down: no new connections');

describe('a clean shutdown (SIGTERM, SHUTDOWN_DRAIN_SECONDS): no work cut, nothing claimed after the signal', () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  async function start(extra: Record<string, string>) {
    const store = await makeStore('shutdown');
    const server = await spawnServer(serverEnv({ ...store.env, ...extra }));
    const database = await openServerDatabase(store);
    cleanups.push(async () => {
      await server.stop('SIGKILL');
      await database.close();
      await store.remove();
    });
    return { server, database };
  }

  it('at SIGTERM the job worker stops claiming at once: a job due after the signal stays queued while the node drains', async () => {
    const { server, database } = await start({ SHUTDOWN_DRAIN_SECONDS: '30', JOB_POLL_INTERVAL_MS: '20' });
    const before = await enqueueHarmlessJob(database);
    await waitFor(
      async () => (await jobRow(database, before)).status === 'done',
      30_000,
      'the worker to run a job',
    );

    // A connection the node keeps open holds its drain (as a proxy's would) for up to 30 s.
    const held = await rawExchange(server.url);
    held.write(`GET /healthz HTTP/1.1\r\nHost: ${new URL(server.url).host}\r\n\r\n`);
    assert.equal((await held.answer).status, 200);
    server.child.kill('SIGTERM');
    await waitFor(shuttingDown(server), 30_000, 'the shutdown to begin');

    const due = await enqueueHarmlessJob(database);
    // Many poll intervals (20 ms) of a worker that would still be claiming.
    await sleep(1_500);
    assert.equal(server.child.exitCode, null, 'the node is still draining');
    assert.deepEqual(await jobRow(database, due), { status: 'queued', attempts: 0, lockedBy: null });

    held.socket.end();
    assert.equal(await exitCode(server), 0);
    assert.deepEqual(await jobRow(database, due), { status: 'queued', attempts: 0, lockedBy: null });
  });

  it('an upload finishing within the drain is answered as usual; one whose body is still arriving when the drain ends gets 503 with Retry-After and a log line, never a reset', async () => {
    const { server } = await start({ SHUTDOWN_DRAIN_SECONDS: '2' });
    const token = await logIn(server.url);
    const finishing = await slowUpload(server.url, token);
    const stalled = await slowUpload(server.url, token);
    server.child.kill('SIGTERM');
    await waitFor(shuttingDown(server), 30_000, 'the shutdown to begin');

    finishing.finish();
    const done = await finishing.answer;
    assert.equal(done.status, 200, done.body);
    assert.ok((JSON.parse(done.body) as { file: { id: string } }).file.id, 'the file was stored');

    const cut = await stalled.answer;
    assert.equal(cut.status, 503, cut.body);
    assert.equal(cut.headers['retry-after'], '5');
    assert.equal(cut.headers.connection, 'close');
    const body = JSON.parse(cut.body) as Record<string, unknown>;
    assert.equal(body.code, 'UNAVAILABLE');
    assert.equal(body.statusCode, 503);
    assert.match(String(body.message), /shutting down.*send it again/);

    assert.equal(await exitCode(server), 0);
    const warning = server
      .output()
      .split('\n')
      .find((line) => line.includes('request body was still arriving at the end of the drain'));
    assert.ok(warning, server.output());
    assert.match(
      warning,
      /"url":"\/api\/v1\/files\/saveFile\?token=\[REDACTED\]"/,
      'the token is not logged',
    );
  });
});
