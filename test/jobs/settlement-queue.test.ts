import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { claimJobs, enqueue, settleJobs, type ClaimedJob } from '../../src/jobs/queue.js';
import { SettlementQueue } from '../../src/jobs/settlement-queue.js';
import { openTestDatabase, type TestDatabase } from './database.js';

describe('settlement queue: a worker’s settlements written together (group commit)', () => {
  let test: TestDatabase;
  const clock = new ManualClock(new Date('2026-03-01T00:00:00.000Z'));
  before(async () => {
    test = await openTestDatabase();
  });
  after(() => test.close());

  /** A queue over the real settleJobs that notes the size of each write. */
  const watchedQueue = () => {
    const batches: number[] = [];
    const queue = new SettlementQueue(
      { db: test.handle.db, dialect: test.handle.dialect, clock },
      (db, dialect, requests, now, options) => {
        batches.push(requests.length);
        return settleJobs(db, dialect, requests, now, options);
      },
    );
    return { queue, batches };
  };

  const claim = (type: string) =>
    claimJobs(test.handle.db, test.handle.dialect, {
      workerId: 'w',
      types: [type],
      limit: 10,
      now: clock.now(),
      leaseMs: 15_000,
    });

  it('the first settlement is written at once; those that arrive meanwhile go out together in the next write', async () => {
    await test.handle.db.transaction().execute(async (trx) => {
      for (let n = 0; n < 5; n++) await enqueue(trx, { type: 'group', payload: { n }, now: clock.now() });
    });
    const jobs = await claim('group');
    assert.equal(jobs.length, 5);
    const { queue, batches } = watchedQueue();
    const outcomes = await Promise.all(
      jobs.map(async (job) => (await queue.settle({ job, settlement: { error: null } })).outcome),
    );
    assert.deepEqual(outcomes, Array(5).fill({ outcome: 'done' }));
    assert.deepEqual(batches, [1, 4]);
    assert.deepEqual(await claim('group'), [], 'all of them done');
  });

  it('two settlements of one lane never share a write; each gets its own outcome', async () => {
    await test.handle.db.transaction().execute(async (trx) => {
      await enqueue(trx, { type: 'lanes', payload: { n: 'alone' }, now: clock.now() });
      await enqueue(trx, { type: 'lanes', payload: { n: 'head' }, now: clock.now(), orderingKey: 'L' });
      await enqueue(trx, { type: 'lanes', payload: { n: 'other' }, now: clock.now() });
    });
    const jobs = new Map((await claim('lanes')).map((job) => [String(job.payload.n), job]));
    const job = (n: string) => jobs.get(n) as ClaimedJob;
    const { queue, batches } = watchedQueue();
    const settled = await Promise.all([
      queue.settle({ job: job('alone'), settlement: { error: null } }),
      queue.settle({ job: job('head'), settlement: { error: null } }),
      // The same job of lane L under an older claim (its lease had expired): written after the head.
      queue.settle({ job: { ...job('head'), attempts: 0 }, settlement: { error: null } }),
      queue.settle({ job: job('other'), settlement: { error: null } }),
    ]);
    const outcomes = settled.map((written) => written.outcome);
    assert.deepEqual(outcomes, [
      { outcome: 'done' },
      { outcome: 'done' },
      { outcome: 'lost' },
      { outcome: 'done' },
    ]);
    assert.deepEqual(batches, [1, 2, 1]);
  });
});
