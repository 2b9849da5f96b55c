import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/base/config.js';
import {
  claimJobs,
  completeJob,
  enqueue,
  failJob,
  type ClaimedJob,
  type EnqueueOptions,
} from '../../src/jobs/queue.js';
import { CANCELLED } from '../../src/jobs/queue-steering.js';
import { parseAge, type JobSelection } from '../../src/ops/jobs/job-selection.js';
import { span } from '../../src/ops/jobs/job-table.js';
import { listJobs } from '../../src/ops/jobs/list-jobs.js';
import { writeTransaction, type DatabaseHandle } from '../../src/store/db/dialect.js';
import { migrateToLatest } from '../../src/store/db/migrate.js';
import { openDatabase } from '../../src/store/db/open-database.js';
import type { Database } from '../../src/store/db/schema.js';
import { scrape } from '../helpers/metrics.js';
import { makeStore, TEST_DATABASE_URL } from '../helpers/server.js';
import { useServer, useStore } from '../helpers/use-server.js';
import { waitFor } from '../webhooks/helpers.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DELIVER = 'webhook.deliver';
const LANE = 'webhook:w1';

/** `signery …` as a separate process over the store `env` names: exit status, output, errors. */
function signery(env: Record<string, string>, args: string[]) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    env: { ...(process.env as Record<string, string>), ...env },
    encoding: 'utf8',
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** `signery jobs list … --json`: the jobs listed. */
function listed(env: Record<string, string>, args: string[]) {
  const run = signery(env, ['jobs', 'list', ...args, '--json']);
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as {
    total: number;
    jobs: {
      id: string;
      type: string;
      state: string;
      attempts: number;
      lane: string | null;
      lastError: string | null;
    }[];
  };
}

/** Real queue operations on one database, at times relative to the real clock (the command's). */
function queueOf(handle: () => Pick<DatabaseHandle<Database>, 'db' | 'dialect'>) {
  const ago = (ms: number) => new Date(Date.now() - ms);
  return {
    enqueue: (options: Omit<EnqueueOptions, 'now'> & { enqueuedAgo: number }) => {
      const { enqueuedAgo, ...rest } = options;
      return enqueue(handle().db, { ...rest, now: ago(enqueuedAgo), runAt: rest.runAt ?? ago(enqueuedAgo) });
    },
    claim: (types: string[], limit = 10) =>
      claimJobs(handle().db, handle().dialect, {
        workerId: 'test-worker',
        types,
        limit,
        now: new Date(),
        leaseMs: HOUR,
      }),
    /** A retry is due an hour and some seconds from now: delayed, however slow the machine. */
    fail: (job: ClaimedJob, retry: boolean) =>
      writeTransaction(handle().db, handle().dialect, (trx) =>
        failJob(
          trx,
          job,
          `the receiver answered 500 (${job.id})`,
          new Date(Date.now() + (retry ? HOUR : 0)),
          {
            retry,
          },
        ),
      ),
    complete: (job: ClaimedJob) =>
      writeTransaction(handle().db, handle().dialect, (trx) => completeJob(trx, job, new Date())),
    row: (id: string) =>
      handle().db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
  };
}

describe('signery jobs list|retry|cancel (docs/operations.md: The job queue)', () => {
  const store = useStore('jobs-cli');
  let database: DatabaseHandle<Database>;
  before(async () => {
    database = await openDatabase(loadConfig({ ...store.env }));
    await migrateToLatest(database);
  });
  after(() => database.close());
  const queue = queueOf(() => database);
  const env = () => ({ ...store.env });

  /**
   * A webhook lane whose first delivery is dead (its next one is then due, a third waits behind it),
   * a mail due now and one for later, a failed SMS waiting for its retry, and an SMS being run.
   */
  const aQueue = async () => {
    const dead = await queue.enqueue({
      id: 'd-dead',
      type: DELIVER,
      payload: {},
      orderingKey: LANE,
      enqueuedAgo: 3 * HOUR,
    });
    await queue.enqueue({
      id: 'd-next',
      type: DELIVER,
      payload: {},
      orderingKey: LANE,
      enqueuedAgo: 2 * HOUR,
    });
    await queue.enqueue({ id: 'd-last', type: DELIVER, payload: {}, orderingKey: LANE, enqueuedAgo: HOUR });
    const [head] = await queue.claim([DELIVER], 1);
    assert.equal(head?.id, dead.id);
    assert.deepEqual(await queue.fail(head, false), { outcome: 'dead' });
    await queue.enqueue({
      id: 'm-ready',
      type: 'mail.send',
      payload: { to: 'a@example.test' },
      enqueuedAgo: 2 * HOUR,
    });
    await queue.enqueue({
      id: 'm-later',
      type: 'mail.send',
      payload: {},
      enqueuedAgo: 5 * MINUTE,
      runAt: new Date(Date.now() + HOUR),
    });
    await queue.enqueue({ id: 's-retry', type: 'sms.send', payload: {}, enqueuedAgo: 30 * MINUTE });
    await queue.enqueue({ id: 's-running', type: 'sms.send', payload: {}, enqueuedAgo: 20 * MINUTE });
    const sms = await queue.claim(['sms.send']);
    const retrying = sms.find((job) => job.id === 's-retry')!;
    assert.equal((await queue.fail(retrying, true)).outcome, 'retry');
  };

  it('list shows jobs by type, state and age, as JSON and as a table, and never their payload', async () => {
    await aQueue();
    const all = listed(env(), []);
    assert.deepEqual(
      all.jobs.map((job) => [job.id, job.state]),
      [
        ['d-dead', 'dead'],
        ['d-next', 'ready'],
        ['m-ready', 'ready'],
        ['d-last', 'waiting'],
        ['s-retry', 'delayed'],
        ['s-running', 'running'],
        ['m-later', 'delayed'],
      ],
      'every job, oldest first',
    );
    assert.equal(all.total, 7);
    assert.doesNotMatch(JSON.stringify(all), /a@example\.test/, 'never a payload');
    // The filters, through the command's use case in this process (a process per case is slow).
    const list = (selection: Partial<JobSelection>, limit = 100) =>
      listJobs({
        db: database.db,
        selection: { ids: [], types: [], states: [], ...selection },
        now: new Date(),
        limit,
      });
    assert.deepEqual(
      (await list({ types: [DELIVER], states: ['dead'] })).jobs.map((job) => [
        job.id,
        job.attempts,
        job.lastError,
      ]),
      [['d-dead', 1, 'the receiver answered 500 (d-dead)']],
    );
    assert.deepEqual(
      (await list({ states: ['ready', 'waiting'], olderThanMs: parseAge('90m') })).jobs.map((job) => job.id),
      ['d-next', 'm-ready'],
      'enqueued more than 90 minutes ago, due or waiting in their lane',
    );
    assert.equal((await list({ olderThanMs: parseAge('4h') })).total, 0);
    const some = await list({}, 2);
    assert.equal(some.total, 7, 'the total counts every match');
    assert.equal(some.jobs.length, 2);

    const table = signery(env(), ['jobs', 'list', '--type', 'sms.send']);
    assert.equal(table.status, 0, table.stderr);
    const lines = table.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^ID +TYPE +STATE +ATTEMPTS +AGE +NEXT RUN +LAST ERROR$/);
    assert.match(
      lines[1]!,
      /^s-retry +sms\.send +delayed +1\/10 +3\dm\d+s +in (1h0m|[1-5]?\dm\d+s) +the receiver answered 500 \(s-retry\)$/,
    );
    assert.match(lines[2]!, /^s-running +sms\.send +running +1\/10 +2\dm\d+s +- +-$/);
    assert.equal(lines[3], '2 jobs');
  });

  it('on a database this release has not migrated (a new installation): says so and exits 1, no stack', async () => {
    const fresh = await makeStore('jobs-fresh');
    try {
      const run = signery({ ...fresh.env }, ['jobs', 'list']);
      assert.equal(run.status, 1, run.stdout);
      assert.match(
        run.stderr,
        /^The database has not applied \d+ migrations of this release \(from 0001-foundation\): start the server once with this release, or run signery migrate/,
      );
      assert.doesNotMatch(run.stderr, /\bat \S+:\d+:\d+/);
    } finally {
      await fresh.remove();
    }
  });

  it('the table gives a span in its largest unit and the next one down, that one even when it is zero', () => {
    const SECOND = 1000;
    assert.deepEqual(
      [
        0,
        400,
        12 * SECOND,
        4 * MINUTE + 10 * SECOND,
        HOUR + 2 * SECOND,
        2 * HOUR + 5 * MINUTE,
        76 * HOUR,
      ].map(span),
      ['0s', '0s', '12s', '4m10s', '1h0m', '2h5m', '3d4h'],
    );
  });

  it('list, retry and cancel refuse arguments that select nothing sensible, with a usage message (exit 2)', () => {
    for (const [args, message] of [
      [
        ['jobs', 'list', '--state', 'failed'],
        /--state must be one of ready, delayed, waiting, running, dead, done/,
      ],
      [['jobs', 'list', '--older-than', 'an hour'], /--older-than takes a duration such as 30m/],
      [['jobs', 'retry'], /jobs retry needs job ids, --type, --state or --older-than \(or --all\)/],
    ] as const) {
      const refused = signery(env(), [...args]);
      assert.equal(refused.status, 2, refused.stderr);
      assert.match(refused.stderr, message);
      assert.match(refused.stderr, /Usage: signery[\s\S]*jobs list\|retry\|cancel/);
    }
  });

  it('retry queues a dead job again as a new series behind the jobs waiting in its lane, and makes a job waiting for its retry due now', async () => {
    const retried = signery(env(), ['jobs', 'retry', '--state', 'dead', '--state', 'delayed']);
    assert.equal(retried.status, 0, retried.stderr);
    assert.match(retried.stdout, /^Retried 2 jobs \(1 dead, 1 delayed\)\.$/m);
    assert.doesNotMatch(retried.stdout, /m-later/, 'a job delayed on purpose has not failed: passed over');

    const dead = await queue.row('d-dead');
    assert.equal(dead.status, 'queued');
    assert.equal(Number(dead.attempts), 0, 'a new series of attempts');
    assert.equal(dead.run_at, null, 'it waits behind the lane’s jobs that were waiting');
    assert.ok(
      Number(dead.ordering_seq) > Number((await queue.row('d-last')).ordering_seq),
      'last in its lane',
    );
    const sms = await queue.row('s-retry');
    assert.ok(Date.parse(String(sms.run_at)) <= Date.now(), 'due now');
    assert.equal(
      (
        await listJobs({
          db: database.db,
          selection: { ids: ['s-retry'], types: [], states: [] },
          now: new Date(),
          limit: 1,
        })
      ).jobs[0]?.state,
      'ready',
    );

    // The lane still runs one at a time, in order: d-next, then d-last, then the retried d-dead.
    const order: string[] = [];
    for (;;) {
      const claimed = await queue.claim([DELIVER]);
      if (claimed.length === 0) break;
      assert.equal(claimed.length, 1, 'one job of a lane at a time');
      order.push(claimed[0]!.id);
      assert.ok(await queue.complete(claimed[0]!));
    }
    assert.deepEqual(order, ['d-next', 'd-last', 'd-dead']);
  });

  it('retry names each job it was asked about by id but could not retry, and exits 1', () => {
    const refused = signery(env(), ['jobs', 'retry', 's-running', 'm-ready', 'nope']);
    assert.equal(refused.status, 1);
    assert.match(refused.stdout, /^No job retried\.$/m);
    assert.match(refused.stdout, /s-running \(running\): a worker is running it/);
    assert.match(refused.stdout, /m-ready \(ready\): it is due already/);
    assert.match(refused.stdout, /No job has the id nope\./);
  });

  it('cancel makes queued jobs dead, never a running one (it says so and exits 1), and a cancelled lane head lets the next job of its lane run', async () => {
    await queue.enqueue({
      id: 'l-head',
      type: DELIVER,
      payload: {},
      orderingKey: 'webhook:w2',
      enqueuedAgo: 10 * MINUTE,
    });
    await queue.enqueue({
      id: 'l-middle',
      type: DELIVER,
      payload: {},
      orderingKey: 'webhook:w2',
      enqueuedAgo: 9 * MINUTE,
    });
    await queue.enqueue({
      id: 'l-tail',
      type: DELIVER,
      payload: {},
      orderingKey: 'webhook:w2',
      enqueuedAgo: 8 * MINUTE,
    });

    const refused = signery(env(), ['jobs', 'cancel', '--type', 'sms.send']);
    assert.equal(refused.status, 1);
    assert.match(refused.stdout, /^Cancelled 1 job \(1 ready\)\.$/m);
    assert.match(
      refused.stdout,
      /s-running \(running\): a worker is running it: a running job is never cancelled \(its worker finishes it\)/,
    );
    assert.equal((await queue.row('s-running')).status, 'running');
    assert.deepEqual(
      [(await queue.row('s-retry')).status, (await queue.row('s-retry')).last_error],
      ['dead', CANCELLED],
    );

    // The head and the one behind it: what is left of the lane runs.
    const cancelled = signery(env(), ['jobs', 'cancel', 'l-middle', 'l-head', '--json']);
    assert.equal(cancelled.status, 0, cancelled.stderr);
    assert.deepEqual(
      JSON.parse(cancelled.stdout).changed,
      [
        { id: 'l-head', from: 'ready' },
        { id: 'l-middle', from: 'waiting' },
      ],
      'in lane order',
    );
    const [next] = await queue.claim([DELIVER]);
    assert.equal(next?.id, 'l-tail', 'the lane’s next job became due');
    assert.ok(await queue.complete(next));
    const lane = await database.db
      .selectFrom('job_lanes')
      .select('active')
      .where('key', '=', 'webhook:w2')
      .executeTakeFirstOrThrow();
    assert.equal(Number(lane.active), 0, 'the lane counts no unfinished job');

    // A cancelled job is dead, and retry brings it back.
    const dead = await listJobs({
      db: database.db,
      selection: { ids: [], types: [DELIVER], states: ['dead'] },
      now: new Date(),
      limit: 10,
    });
    assert.deepEqual(dead.jobs.map((job) => job.id).sort(), ['l-head', 'l-middle']);
    const retried = signery(env(), ['jobs', 'retry', 'l-head']);
    assert.equal(retried.status, 0, retried.stderr);
    const [again] = await queue.claim([DELIVER]);
    assert.equal(again?.id, 'l-head', 'due again, alone in its lane');
  });
});

describe('GET /metrics: dead jobs by type, and signery jobs retry on the same installation', () => {
  const server = useServer({ worker: false });
  const queue = queueOf(() => server.app.deps);
  const env = () => ({
    DATA_DIR: server.dataDir,
    ...(TEST_DATABASE_URL && server.schema
      ? { DATABASE_URL: TEST_DATABASE_URL, DATABASE_SCHEMA: server.schema }
      : {}),
  });

  it('signery_jobs_dead{type} counts the jobs that failed for good; retried, they are counted ready again', async () => {
    for (const id of ['x-1', 'x-2', 'x-3'])
      await queue.enqueue({ id, type: 'mail.send', payload: {}, enqueuedAgo: HOUR });
    for (const job of await queue.claim(['mail.send'], 2)) await queue.fail(job, false);
    const before = await scrape(`${server.url}/metrics`);
    assert.equal(before.status, 200);
    assert.equal(before.value('signery_jobs_dead', { type: 'mail.send' }), 2);
    assert.equal(before.value('signery_jobs', { type: 'mail.send', state: 'ready' }), 1);
    assert.equal(before.value('signery_jobs_failing', { type: 'mail.send' }), 0, 'a dead job is not failing');

    const retried = signery(env(), ['jobs', 'retry', '--type', 'mail.send']);
    assert.equal(retried.status, 0, retried.stderr);
    assert.match(retried.stdout, /^Retried 2 jobs \(2 dead\)\.$/m);
    // The gauges read the queue at most once a second: scraped until the read after the retry shows.
    await waitFor(
      async () => {
        const after = await scrape(`${server.url}/metrics`);
        return (
          after.value('signery_jobs_dead', { type: 'mail.send' }) === 0 &&
          after.value('signery_jobs', { type: 'mail.send', state: 'ready' }) === 3
        );
      },
      10_000,
      'no dead mail.send job left, three ready',
    );
  });
});
