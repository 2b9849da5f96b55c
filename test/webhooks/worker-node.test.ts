import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DatabaseHandle } from '../../src/store/db/dialect.js';
import { openPostgres } from '../../src/store/db/postgres/postgres-database.js';
import type { Database } from '../../src/store/db/schema.js';
import { scrape } from '../helpers/metrics.js';
import { makePdf } from '../helpers/pdf.js';
import { TEST_DATABASE_URL } from '../helpers/server.js';
import { startReceiver, waitFor, type Receiver } from './helpers.js';
import {
  createTenantWebhook,
  logIn,
  serverEnv,
  spawnServer,
  spawnWorkerNode,
  tearDownNodes,
  type ServerProcess,
} from './processes.js';

/** POST /files/saveFile, then POST /documents (with `requestId`): the API node commits documentCreated. */
async function createDocument(url: string, token: string, requestId: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([makePdf()], { type: 'application/pdf' }), 'contract.pdf');
  const query = `token=${encodeURIComponent(token)}`;
  const saved = await fetch(`${url}/api/v1/files/saveFile?${query}`, { method: 'POST', body: form });
  assert.equal(saved.status, 200, await saved.clone().text());
  const content = ((await saved.json()) as { file: { id: string } }).file.id;
  const created = await fetch(`${url}/api/v1/documents?${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': requestId },
    body: JSON.stringify({ body: { documentTitle: 'Worker node', pdfFile: { content } } }),
  });
  assert.equal(created.status, 200, await created.clone().text());
  return ((await created.json()) as { results: { documentId: string }[] }).results[0]!.documentId;
}

describe(
  'an API node (JOB_WORKER=false) and a worker-only node (signery worker) on one PostgreSQL',
  {
    skip: TEST_DATABASE_URL ? false : 'SQLite is one process’s file: a separate worker node needs PostgreSQL',
  },
  () => {
    const schema = `t_worker_${randomBytes(4).toString('hex')}`;
    const dataDirs: string[] = [];
    const nodes: ServerProcess[] = [];
    let receiver: Receiver;
    let database: DatabaseHandle<Database> | undefined;
    before(async () => {
      receiver = await startReceiver();
      for (const name of ['api', 'worker']) dataDirs.push(await mkdtemp(join(tmpdir(), `signery-${name}-`)));
    });
    after(() =>
      tearDownNodes({
        nodes: nodes,
        closers: [database, receiver],
        dataDirs,
        databaseUrl: TEST_DATABASE_URL ?? '',
        schema,
      }),
    );

    it('a change committed on the API node wakes the worker node at once (LISTEN/NOTIFY), though it polls once a minute; the API node runs no job', async () => {
      const url = TEST_DATABASE_URL ?? '';
      const shared = { DATABASE_URL: url, DATABASE_SCHEMA: schema };
      const api = await spawnServer(serverEnv({ ...shared, DATA_DIR: dataDirs[0]!, JOB_WORKER: 'false' }));
      nodes.push(api);
      // Its first look at the queue is at start; the next poll would be a minute later.
      const worker = await spawnWorkerNode(
        serverEnv({ ...shared, DATA_DIR: dataDirs[1]!, JOB_POLL_INTERVAL_MS: '60000', METRICS_PORT: '0' }),
      );
      nodes.push(worker);

      const token = await logIn(api.url);
      await createTenantWebhook(api.url, token, receiver.url);
      const documentId = await createDocument(api.url, token, 'api-node-req-1');
      await waitFor(
        () => receiver.received.some((r) => r.json.documentId === documentId),
        20_000,
        'documentCreated at the receiver, well before the worker node’s next poll',
      );
      assert.equal(receiver.received[0]?.json.event, 'documentCreated');

      // A second change: the worker node is still listening after its first wake-up.
      const second = await createDocument(api.url, token, 'api-node-req-2');
      await waitFor(
        () => receiver.received.some((r) => r.json.documentId === second),
        20_000,
        'the second event',
      );

      database = await openPostgres({ url, schema });
      const claimedBy = await database.db
        .selectFrom('jobs')
        .select('locked_by')
        .distinct()
        .where('type', '=', 'webhook.deliver')
        .execute();
      assert.deepEqual(
        claimedBy.map((row) => row.locked_by?.split('/').slice(0, 2).join('/')),
        [`${hostname()}/${worker.child.pid}`],
        'every delivery was claimed by the worker node',
      );

      // The worker node counts its deliveries (METRICS_PORT); the API node, which ran none, does not.
      const metricsUrl = /"metricsUrl":"([^"]+)"/.exec(worker.output())?.[1];
      assert.ok(metricsUrl, worker.output());
      await waitFor(
        async () =>
          (await scrape(metricsUrl)).value('signery_webhook_attempts_total', { outcome: 'success' }) === 2,
        10_000,
        'two successful attempts in the worker node’s metrics',
      );
      assert.ok(!(await scrape(`${api.url}/metrics`)).has('signery_webhook_attempts_total'));
      // An id given to the API node's request names the delivery job in the worker node's log.
      const linesOf = (reqId: string) =>
        worker
          .output()
          .split('\n')
          .filter((line) => line.includes(`"reqId":"${reqId}"`))
          .map((line) => JSON.parse(line) as { type?: string; msg: string })
          .map((line) => [line.type, line.msg]);
      for (const reqId of ['api-node-req-1', 'api-node-req-2']) {
        await waitFor(() => linesOf(reqId).length === 2, 10_000, `the outcome of ${reqId}'s delivery`);
        assert.deepEqual(linesOf(reqId), [
          ['webhook.deliver', 'job started'],
          ['webhook.deliver', 'job done'],
        ]);
      }
    });
  },
);
