import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { enqueue } from '../../src/jobs/queue.js';
import { Worker, type JobHandler } from '../../src/jobs/worker.js';
import { openTestDatabase, type TestDatabase } from './database.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('lanes run ahead: a lane’s jobs run one after the other while their settlements are written behind them', () => {
  let test: TestDatabase;
  const clock = new ManualClock(new Date('2026-03-01T00:00:00.000Z'));
  before(async () => {
    test = await openTestDatabase();
  });
  after(() => test.close());

  const deps = () => ({ db: test.handle.db, dialect: test.handle.dialect, clock });
  const addLane = (type: string, lane: string, count: number) =>
    test.handle.db.transaction().execute(async (trx) => {
      for (let n = 1; n <= count; n++)
        await enqueue(trx, {
          type,
          payload: { n },
          now: clock.now(),
          orderingKey: lane,
          deadline: new Date(clock.now().getTime() + 86_400_000),
        });
    });
  const jobs = (type: string) =>
    test.handle.db
      .selectFrom('jobs')
      .select(['status', 'attempts', 'ordering_seq'])
      .where('type', '=', type)
      .orderBy('ordering_seq')
      .execute();
  const active = async (lane: string) =>
    Number(
      (
        await test.handle.db
          .selectFrom('job_lanes')
          .select('active')
          .where('key', '=', lane)
          .executeTakeFirstOrThrow()
      ).active,
    );
  /** A handler that logs when each job starts and when its settlement has been written. */
  const logging = (log: string[], fails: (n: number) => boolean = () => false): JobHandler => {
    return async (job, context) => {
      const n = Number(job.payload.n);
      log.push(`start ${n}`);
      const { outcome } = await context.settle({ error: fails(n) ? `job ${n} failed` : null });
      log.push(`${outcome} ${n}`);
    };
  };

  it('runs the next job before the one before it is written, in lane order, each once', async () => {
    await addLane('ahead', 'lane-ahead', 8);
    const log: string[] = [];
    const worker = new Worker(deps()).register('ahead', logging(log), { runAhead: true });
    assert.equal(await worker.runDue(), 1, 'one claim: the lane’s head; the rest ran behind it');
    const starts = log.filter((entry) => entry.startsWith('start'));
    assert.deepEqual(
      starts,
      [1, 2, 3, 4, 5, 6, 7, 8].map((n) => `start ${n}`),
    );
    assert.ok(
      [1, 2, 3, 4, 5, 6, 7].some((n) => log.indexOf(`start ${n + 1}`) < log.indexOf(`done ${n}`)),
      `a job started before the one before it was written: ${log.join(', ')}`,
    );
    for (const job of await jobs('ahead')) assert.deepEqual([job.status, Number(job.attempts)], ['done', 1]);
    assert.equal(await active('lane-ahead'), 0);
  });

  it('a job to retry holds its lane: nothing after it runs until it succeeds', async () => {
    await addLane('hold', 'lane-hold', 5);
    const log: string[] = [];
    let failures = 0;
    const worker = new Worker(deps()).register(
      'hold',
      logging(log, (n) => n === 3 && failures++ === 0),
      { runAhead: true },
    );
    await worker.runDue();
    assert.deepEqual(
      log.filter((entry) => entry.startsWith('start')),
      ['start 1', 'start 2', 'start 3'],
    );
    assert.ok(log.includes('retry 3'), log.join(', '));
    const waiting = await jobs('hold');
    assert.deepEqual(
      waiting.map((job) => job.status),
      ['done', 'done', 'queued', 'queued', 'queued'],
    );
    assert.deepEqual(
      waiting.map((job) => Number(job.attempts)),
      [1, 1, 1, 0, 0],
      'four and five never ran',
    );
    clock.advance(30_000);
    await worker.runDue();
    assert.deepEqual(log.filter((entry) => entry.startsWith('start')).slice(3), [
      'start 3',
      'start 4',
      'start 5',
    ]);
    assert.equal(await active('lane-hold'), 0);
  });

  it('stop() ends a run: what ran is written, and the rest of the lane is due for any worker', async () => {
    await addLane('stop', 'lane-stop', 12);
    const log: string[] = [];
    const slow: JobHandler = async (job, context) => {
      await sleep(10);
      await logging(log)(job, context);
    };
    const worker = new Worker(deps(), { pollIntervalMs: 10 }).register('stop', slow, { runAhead: true });
    worker.start();
    while (!log.includes('start 3')) await sleep(2);
    await worker.stop();
    const ran = log.filter((entry) => entry.startsWith('start')).length;
    assert.ok(ran < 12, `the run stopped early (${String(ran)} ran)`);
    const states = await jobs('stop');
    assert.deepEqual(
      states.slice(0, ran).map((job) => job.status),
      Array<string>(ran).fill('done'),
      'every job that ran was written',
    );
    assert.equal(states.filter((job) => job.status === 'running').length, 0);

    const next = new Worker(deps()).register('stop', logging(log), { runAhead: true });
    await next.runDue();
    assert.deepEqual(
      log.filter((entry) => entry.startsWith('start')),
      Array.from({ length: 12 }, (_, index) => `start ${String(index + 1)}`),
      'the rest ran, in order, each once',
    );
    assert.equal(await active('lane-stop'), 0);
  });

  it('a handler of a type run ahead may not settle in a transaction of its own', async () => {
    await addLane('own', 'lane-own', 1);
    const worker = new Worker(deps()).register(
      'own',
      async (_job, context) => {
        await test.handle.db.transaction().execute((trx) => context.complete(trx));
      },
      { runAhead: true },
    );
    await worker.runDue();
    const [job] = await jobs('own');
    assert.equal(job?.status, 'queued', 'failed, to be retried');
  });
});
