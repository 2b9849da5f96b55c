import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { enqueue } from '../../src/jobs/queue.js';
import { Worker } from '../../src/jobs/worker.js';
import { afterCommit, runsAfterCommit, writeTransaction } from '../../src/store/db/dialect.js';
import type { Database } from '../../src/store/db/schema.js';
import { openTestDatabase, type TestDatabase } from './database.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error('timed out');
    await sleep(5);
  }
}

describe('job worker: poll loop, concurrency, graceful stop, schedules', () => {
  let test: TestDatabase;
  const clock = new ManualClock(new Date('2026-02-01T00:00:00.000Z'));
  before(async () => {
    test = await openTestDatabase();
  });
  after(() => test.close());

  const deps = () => ({ db: test.handle.db, dialect: test.handle.dialect, clock });
  const add = (type: string, payload: Record<string, unknown> = {}) =>
    test.handle.db.transaction().execute((trx) => enqueue(trx, { type, payload, now: clock.now() }));

  /**
   * Runs `work` beside a started worker that polls once a minute, so a job of `type` runs soon only
   * if something wakes the worker; `ran` collects the `n` of each job run.
   */
  const withSleepyWorker = async (type: string, work: (ran: number[]) => Promise<void>) => {
    const worker = new Worker(deps(), { pollIntervalMs: 60_000 });
    const ran: number[] = [];
    worker.register(type, async (job) => {
      ran.push(Number(job.payload.n));
    });
    worker.start();
    try {
      await sleep(50);
      await work(ran);
    } finally {
      await worker.stop();
    }
  };

  it('an enqueue in this process wakes the worker at once, without waiting for the next poll', async () => {
    await withSleepyWorker('wake', async (ran) => {
      await add('wake', { n: 1 });
      // Without the wake-up the job would wait for the next poll, a minute away.
      await waitFor(() => ran.length === 1, 15_000);
      assert.deepEqual(ran, [1]);
    });
  });

  it('an enqueue in a writeTransaction wakes the worker once the transaction has committed', async () => {
    await withSleepyWorker('wake-after-commit', async (ran) => {
      const { db, dialect } = test.handle;
      await writeTransaction(db, dialect, async (trx) => {
        await enqueue(trx, { type: 'wake-after-commit', payload: { n: 1 }, now: clock.now() });
        // Not before the commit: a worker woken now would find nothing and sleep for a minute.
        await sleep(100);
        assert.deepEqual(ran, []);
      });
      await waitFor(() => ran.length === 1, 15_000);
      assert.deepEqual(ran, [1]);
    });
  });

  it('what a writeTransaction runs after its commit: nothing after a rollback; a hook that throws changes nothing', async () => {
    const { db, dialect } = test.handle;
    const seen: string[] = [];
    await assert.rejects(
      writeTransaction(db, dialect, async (trx) => {
        afterCommit(trx, () => seen.push('rolled back'));
        throw new Error('the change fails');
      }),
      /the change fails/,
    );
    const result = await writeTransaction(db, dialect, async (trx) => {
      assert.equal(runsAfterCommit(trx), true);
      afterCommit(trx, () => {
        throw new Error('a hook that fails');
      });
      afterCommit(trx, () => seen.push('committed'));
      return 'the result';
    });
    assert.equal(result, 'the result');
    assert.deepEqual(seen, ['committed']);
    await db.transaction().execute(async (trx) => {
      assert.equal(runsAfterCommit(trx), false);
      assert.throws(() => afterCommit<Database>(trx, () => undefined), /not begun by writeTransaction/);
    });
  });

  it('runs at most `concurrency` handlers at once, and stop() waits for the running ones', async () => {
    const worker = new Worker(deps(), { pollIntervalMs: 10, concurrency: 3 });
    let running = 0;
    let peak = 0;
    let finished = 0;
    worker.register('slow', async () => {
      running += 1;
      peak = Math.max(peak, running);
      await sleep(60);
      running -= 1;
      finished += 1;
    });
    for (let i = 0; i < 7; i++) await add('slow');
    worker.start();
    await waitFor(() => finished >= 1);
    await worker.stop();
    assert.equal(peak, 3);
    assert.equal(running, 0, 'no handler left running after stop()');
    const states = await test.handle.db
      .selectFrom('jobs')
      .select('status')
      .where('type', '=', 'slow')
      .execute();
    assert.equal(states.filter((s) => s.status === 'running').length, 0, 'every started job was settled');
    assert.equal(states.filter((s) => s.status === 'done').length, finished);
    // The rest is still queued and runs later.
    const next = new Worker(deps(), { concurrency: 10 });
    next.register('slow', async () => undefined);
    assert.equal(await next.runDue(), 7 - finished);
  });

  it('a handler that throws fails the job, which runs again after its backoff', async () => {
    const worker = new Worker(deps());
    let calls = 0;
    worker.register('flaky', async () => {
      calls += 1;
      if (calls === 1) throw new Error('first time fails');
    });
    await add('flaky');
    assert.equal(await worker.runDue(), 1);
    assert.equal(await worker.runDue(), 0, 'not due yet');
    const row = await test.handle.db
      .selectFrom('jobs')
      .select(['status', 'last_error'])
      .where('type', '=', 'flaky')
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { status: 'queued', last_error: 'first time fails' });
    clock.advance(30_000);
    assert.equal(await worker.runDue(), 1);
    assert.equal(calls, 2);
  });

  it('every(name, interval): each tick runs once across all workers sharing the database', async () => {
    const another = test.handle.dialect.name === 'postgres' ? await test.openAnother() : test.handle;
    const ticks: string[] = [];
    const make = (db: typeof test.handle) =>
      new Worker({ db: db.db, dialect: db.dialect, clock }).every('report', 60_000, async (tick) => {
        ticks.push(tick.toISOString());
      });
    const workers = [make(test.handle), make(another)];
    clock.advance(60_000 - (clock.now().getTime() % 60_000) + 1_000); // one second into a tick
    await Promise.all(workers.map((w) => w.runDue()));
    await Promise.all(workers.map((w) => w.runDue()));
    assert.equal(ticks.length, 1);
    clock.advance(30_000);
    await Promise.all(workers.map((w) => w.runDue()));
    assert.equal(ticks.length, 1, 'same tick');
    clock.advance(30_000);
    await Promise.all(workers.map((w) => w.runDue()));
    await Promise.all(workers.map((w) => w.runDue()));
    assert.equal(ticks.length, 2);
    assert.equal(new Set(ticks).size, 2);
    assert.equal(new Date(ticks[1]!).getTime() - new Date(ticks[0]!).getTime(), 60_000);
  });
});
