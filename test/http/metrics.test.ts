import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { readJson } from '../../src/store/db/json.js';
import { createTestPki } from '../fixtures/test-pki.js';
import { startTestTsa, type TestTsa } from '../fixtures/tsa-server.js';
import { logLines } from '../helpers/logs.js';
import { scrape, type Scrape } from '../helpers/metrics.js';
import { makePdf } from '../helpers/pdf.js';
import { startServer, TEST_DATABASE_URL, upload, type TestServer } from '../helpers/server.js';
import { useServer, useStore } from '../helpers/use-server.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { createWebhook, startReceiver, waitFor, type Receiver } from '../webhooks/helpers.js';
import { serverEnv, spawnWorkerNode } from '../webhooks/processes.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DELIVER = 'webhook.deliver';

/** POST /files/saveFile then POST /documents (documentCreated), the latter with `requestId`. */
async function createDocument(server: TestServer, token: string, requestId: string) {
  const content = await upload(server, token, makePdf());
  const created = await server.api('POST', '/documents', {
    token,
    headers: { 'x-request-id': requestId },
    body: { body: { documentTitle: 'Metrics', pdfFile: { content } } },
  });
  assert.equal(created.status, 200, created.text);
  assert.equal(created.headers.get('x-request-id'), requestId, 'the request id comes back');
  return created.body.results[0].documentId as string;
}

/** Scrapes until `check` holds: the queue's gauges are read at most once a second. */
async function scrapeUntil(server: TestServer, check: (metrics: Scrape) => boolean, what: string) {
  let last: Scrape | undefined;
  await waitFor(
    async () => {
      last = await scrape(`${server.url}/metrics`);
      assert.equal(last.status, 200, last.text);
      return check(last);
    },
    10_000,
    what,
  );
  return last!;
}

describe('GET /metrics after real traffic (docs/operations.md: Metrics and alerts)', () => {
  const clock = new ManualClock(new Date());
  const log = logLines();
  let tsa: TestTsa;
  let receiver: Receiver;
  let server: TestServer;
  let admin: string;
  before(async () => {
    tsa = await startTestTsa(await (await createTestPki()).tsa());
    // The first attempt fails; every later one succeeds.
    receiver = await startReceiver((_request, index) => (index === 0 ? 500 : 204));
    server = await startServer({
      clock,
      env: { TSA_URL: tsa.url, WEBHOOK_ALLOW_PRIVATE: 'true' },
      logger: { level: 'info', stream: log.stream },
    });
    admin = await server.adminToken();
  });
  after(async () => {
    await server.close();
    await receiver.close();
    await tsa.close();
  });

  it('counts the seal, its time-stamp and a delivery that failed once then succeeded; the jobs log the request ids that caused them', async () => {
    const hook = await createWebhook(server, admin, { type: 'tenant', callbackUrl: receiver.url });
    const documentId = await createDocument(server, admin, 'trace-create-7f3a');
    await waitFor(() => receiver.received.length === 1, 10_000, 'the first (failing) attempt');

    // While the documentCreated delivery waits for its retry, a seal at B-T asks the TSA once and
    // queues documentSigned behind it in the webhook's lane.
    const sealed = await server.api('PUT', '/documents/seal/1', {
      token: admin,
      headers: { 'x-request-id': 'trace-seal-51c2' },
      body: { id: documentId, certificate: true, level: 'B-T' },
    });
    assert.equal(sealed.status, 200, sealed.text);
    assert.equal(sealed.body.levelAchieved, 'B-T');
    let metrics = await scrapeUntil(
      server,
      (m) =>
        m.value('signery_webhook_attempts_total', { outcome: 'failure' }) === 1 &&
        m.value('signery_job_runs_total', { type: DELIVER, outcome: 'retry' }) === 1 &&
        m.value('signery_jobs', { type: DELIVER, state: 'waiting' }) === 1,
      'the failed attempt and the waiting delivery',
    );
    assert.equal(metrics.value('signery_jobs', { type: DELIVER, state: 'delayed' }), 1, 'the retry');
    assert.equal(metrics.value('signery_jobs', { type: DELIVER, state: 'ready' }), 0);
    assert.equal(metrics.value('signery_jobs', { type: DELIVER, state: 'running' }), 0);
    assert.equal(metrics.value('signery_jobs_failing', { type: DELIVER }), 1);
    assert.equal(metrics.value('signery_jobs_oldest_ready_age_seconds', { type: DELIVER }), 0);
    assert.equal(metrics.value('signery_webhook_attempts_total', { outcome: 'success' }), undefined);
    assert.equal(metrics.value('signery_database_up'), 1);
    assert.equal(metrics.value('signery_tsa_request_duration_seconds_count', { outcome: 'success' }), 1);
    assert.ok(metrics.value('signery_tsa_request_duration_seconds_sum', { outcome: 'success' })! > 0);
    assert.equal(metrics.value('signery_tsa_failures_total', { reason: 'http' }), undefined);
    assert.equal(
      metrics.value('signery_signature_duration_seconds_count', { operation: 'seal', level: 'B-T' }),
      1,
    );
    assert.equal(
      metrics.value('signery_http_requests_total', {
        method: 'PUT',
        route: '/api/v1/documents/seal/:version',
        status_code: '200',
      }),
      1,
    );

    // The retry comes due: both deliveries go out, each `wait` after its event (the clock is still).
    const deliveries = await server.api('GET', `/webhooks/${hook.id}/deliveries`, { token: admin });
    const retrying = deliveries.body.results.find((d: { status: string }) => d.status === 'retrying');
    const wait = new Date(retrying.nextAttemptAt).getTime() - clock.now().getTime();
    assert.ok(wait > 0);
    clock.advance(wait);
    server.app.worker?.wake();
    await waitFor(() => receiver.received.length === 3, 10_000, 'the retry and documentSigned');
    metrics = await scrapeUntil(
      server,
      (m) =>
        m.value('signery_webhook_attempts_total', { outcome: 'success' }) === 2 &&
        m.value('signery_job_runs_total', { type: DELIVER, outcome: 'done' }) === 2 &&
        m.value('signery_jobs', { type: DELIVER, state: 'waiting' }) === 0 &&
        m.value('signery_jobs', { type: DELIVER, state: 'delayed' }) === 0,
      'two deliveries and an empty lane',
    );
    assert.equal(metrics.value('signery_webhook_attempts_total', { outcome: 'failure' }), 1);
    assert.equal(metrics.value('signery_webhook_attempts_total', { outcome: 'dead' }), undefined);
    assert.equal(metrics.value('signery_webhook_delivery_lag_seconds_count'), 2);
    const lag = metrics.value('signery_webhook_delivery_lag_seconds_sum')!;
    assert.ok(Math.abs(lag - (2 * wait) / 1000) < 1e-6, `lag ${lag} s: twice ${wait / 1000} s`);
    assert.equal(metrics.value('signery_jobs_failing', { type: DELIVER }), 0, 'a type seen stays, at 0');

    // The TSA fails: the seal falls back to B-B, and the failure is counted with its reason.
    tsa.setMode('http-error');
    const fallback = await server.api('PUT', '/documents/seal/2', {
      token: admin,
      body: { id: documentId, certificate: true, level: 'B-T' },
    });
    assert.equal(fallback.status, 200, fallback.text);
    assert.equal(fallback.body.levelAchieved, 'B-B');
    metrics = await scrape(`${server.url}/metrics`);
    assert.equal(metrics.value('signery_tsa_failures_total', { reason: 'http' }), 1);
    assert.equal(metrics.value('signery_tsa_request_duration_seconds_count', { outcome: 'failure' }), 1);
    assert.equal(metrics.value('signery_tsa_request_duration_seconds_count', { outcome: 'success' }), 1);
    assert.equal(
      metrics.value('signery_signature_duration_seconds_count', { operation: 'seal', level: 'B-T' }),
      2,
    );
    for (const secret of [admin, hook.hmacSecret, receiver.url, documentId])
      assert.ok(!metrics.text.includes(secret), 'no token, secret, URL or id in a label');

    // One id leads from the request to the deliveries it caused.
    const linesOf = (reqId: string) => log.lines.filter((line) => line.reqId === reqId);
    const created = linesOf('trace-create-7f3a');
    assert.ok(created.some((line) => line.msg === 'request completed'));
    assert.deepEqual(
      created.filter((line) => line.type === DELIVER).map((line) => [line.msg, line.attempt]),
      [
        ['job started', 1],
        ['job failed; retried later', 1],
        ['job started', 2],
        ['job done', 2],
      ],
    );
    const failed = created.find((line) => line.msg === 'job failed; retried later');
    assert.equal(failed?.error, 'the receiver answered 500');
    assert.deepEqual(
      linesOf('trace-seal-51c2')
        .filter((line) => line.type === DELIVER)
        .map((line) => line.msg),
      ['job started', 'job done'],
    );
  });
});

describe('GET /metrics: the job queue with no worker running', () => {
  const clock = new ManualClock(new Date());
  const server = useServer({ clock, worker: false, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });

  it('shows enqueued deliveries by state (one ready, the rest waiting in its lane) and how long the ready one has waited', async () => {
    const admin = await server.adminToken();
    await createWebhook(server, admin, { type: 'tenant', callbackUrl: 'http://127.0.0.1:9/hook' });
    for (const n of [1, 2, 3]) await createDocument(server, admin, `queued-${n}`);
    clock.advance(90_000);
    const metrics = await scrape(`${server.url}/metrics`);
    assert.equal(metrics.status, 200);
    assert.equal(metrics.value('signery_jobs', { type: DELIVER, state: 'ready' }), 1);
    assert.equal(metrics.value('signery_jobs', { type: DELIVER, state: 'waiting' }), 2);
    assert.equal(metrics.value('signery_jobs', { type: DELIVER, state: 'delayed' }), 0);
    assert.equal(metrics.value('signery_jobs', { type: DELIVER, state: 'running' }), 0);
    assert.equal(metrics.value('signery_jobs_oldest_ready_age_seconds', { type: DELIVER }), 90);
    assert.equal(metrics.value('signery_jobs_failing', { type: DELIVER }), 0);
    assert.equal(metrics.value('signery_database_up'), 1);
    const jobs = await server.app.deps.db
      .selectFrom('jobs')
      .select('payload')
      .where('type', '=', DELIVER)
      .execute();
    assert.deepEqual(
      jobs.map((job) => readJson<{ requestId?: string }>(job.payload, {}).requestId).sort(),
      ['queued-1', 'queued-2', 'queued-3'],
      'each job carries the id of the request that enqueued it',
    );
  });
});

describe('x-request-id: a caller’s short safe token is kept, anything else replaced', () => {
  const server = useServer();

  const idOf = async (path: string, given?: string) => {
    const response = await server.api(
      'GET',
      path,
      given === undefined ? {} : { headers: { 'x-request-id': given } },
    );
    return response.headers.get('x-request-id');
  };

  it('echoes a token of up to 64 letters, digits and . _ : - (on errors too); otherwise answers with a new UUID', async () => {
    assert.equal(await idOf('//healthz', 'abc-123.X:y_z'), 'abc-123.X:y_z');
    assert.equal(await idOf('/no/such/route', 'lb-9f2c'), 'lb-9f2c', 'a 404 carries it too');
    const long = 'a'.repeat(64);
    assert.equal(await idOf('//healthz', long), long);
    for (const unsafe of [`${long}b`, 'has space', '<script>', 'a"b', 'é']) {
      const id = await idOf('//healthz', unsafe);
      assert.match(String(id), UUID, `"${unsafe}" is replaced`);
    }
    const first = await idOf('//healthz');
    const second = await idOf('//healthz');
    assert.match(String(first), UUID);
    assert.notEqual(first, second);
  });
});

describe(
  'GET /metrics while the database cannot be reached',
  {
    skip: TEST_DATABASE_URL
      ? false
      : 'the embedded SQLite file has no connection to lose (and its queries block the process rather than wait)',
  },
  () => {
    it('answers 200 with signery_database_up 0 and without the queue, through a refusal and a partition, then recovers', async () => {
      const target = new URL(TEST_DATABASE_URL!);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      const url = new URL(TEST_DATABASE_URL!);
      url.port = String(proxy.port);
      // No worker: the delivery queued below stays, so the queue has numbers to show.
      const server = await startServer({
        worker: false,
        env: { DATABASE_URL: url.toString(), WEBHOOK_ALLOW_PRIVATE: 'true' },
      });
      try {
        const admin = await server.adminToken();
        await createWebhook(server, admin, { type: 'tenant', callbackUrl: 'http://127.0.0.1:9/hook' });
        await createDocument(server, admin, 'before-the-outage');
        await scrapeUntil(server, (m) => m.value('signery_database_up') === 1 && m.has('signery_jobs'), 'up');

        proxy.refuse();
        assert.equal((await server.api('GET', '/login', { token: admin })).status, 503);
        const down = await scrapeUntil(server, (m) => m.value('signery_database_up') === 0, 'down');
        assert.ok(!down.has('signery_jobs'), 'no queue numbers it could not read');
        assert.ok(down.has('signery_http_requests_total') && down.has('process_cpu_seconds_total'));
        assert.ok(
          (down.value('signery_http_requests_total', {
            method: 'GET',
            route: '/api/v1/login',
            status_code: '503',
          }) ?? 0) >= 1,
          'the 503s are counted',
        );

        // A partition: the connections forward nothing; the scrape still answers (its read has a deadline).
        proxy.restore();
        await scrapeUntil(server, (m) => m.value('signery_database_up') === 1, 'up again');
        proxy.blackhole();
        await scrapeUntil(server, (m) => m.value('signery_database_up') === 0, 'down in the partition');
        proxy.refuse();
        proxy.restore();
        await scrapeUntil(
          server,
          (m) => m.value('signery_database_up') === 1 && m.has('signery_jobs'),
          'back',
        );
      } finally {
        await server.close();
        await proxy.close();
      }
    });
  },
);

describe('signery worker with METRICS_PORT', () => {
  const store = useStore('metrics-worker');

  it('serves GET /metrics (its own job runs and queue) on that port, and nothing else', async () => {
    const worker = await spawnWorkerNode(serverEnv({ ...store.env, METRICS_PORT: '0' }));
    try {
      const address = /"metricsUrl":"(http:\/\/127\.0\.0\.1:\d+\/metrics)"/.exec(worker.output())?.[1];
      assert.ok(address, worker.output());
      // At start the worker runs the schedules' first ticks, one job each.
      await waitFor(
        async () =>
          ((await scrape(address)).value('signery_job_runs_total', {
            type: 'schedule:webhooks.purge',
            outcome: 'done',
          }) ?? 0) >= 1,
        10_000,
        'the first purge tick, counted in the worker',
      );
      const metrics = await scrape(address);
      assert.equal(metrics.value('signery_database_up'), 1);
      assert.ok(metrics.has('process_resident_memory_bytes'));
      const elsewhere = await fetch(new URL('/api/v1/login', address));
      assert.equal(elsewhere.status, 404);
      assert.equal(((await elsewhere.json()) as { code: string }).code, 'NOT_FOUND');
    } finally {
      await worker.stop('SIGTERM');
    }
  });
});
