import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  claimJobs,
  completeJob,
  enqueue,
  failJob,
  readAhead,
  retryDelayMs,
  RETRY_MAX_MS,
  settleJobs,
  type ClaimedJob,
  type EnqueueOptions,
} from '../../src/jobs/queue.js';
import { sql } from 'kysely';
import { writeTransaction } from '../../src/store/db/dialect.js';
import { TEST_DATABASE_URL } from '../helpers/server.js';
import { openTestDatabase, type TestDatabase } from './database.js';
import { settleJob } from './settle-job.js';

const T0 = new Date('2026-01-01T00:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

describe('durable job queue (DESIGN: jobs)', () => {
  let test: TestDatabase;
  before(async () => {
    test = await openTestDatabase();
  });
  after(() => test.close());

  const db = () => test.handle.db;
  const dialect = () => test.handle.dialect;
  const claim = (workerId: string, types: string[], now: Date, limit = 10, leaseMs = 15_000) =>
    claimJobs(db(), dialect(), { workerId, types, limit, now, leaseMs });
  const complete = (job: ClaimedJob, now: Date) =>
    writeTransaction(db(), dialect(), (trx) => completeJob(trx, job, now));
  const fail = (job: ClaimedJob, now: Date, retry?: boolean) =>
    writeTransaction(db(), dialect(), (trx) => failJob(trx, job, 'boom', now, { retry, random: () => 1 }));
  // A row written with a settlement (any table will do; deliveries write their attempts).
  const record = (id: string) => ({
    into: 'events' as const,
    values: {
      id,
      tenant_id: 't',
      organization_id: 'o',
      document_id: 'd',
      event: 'documentCreated',
      actor: 'a',
      occurred_at: T0.toISOString(),
    },
  });
  /** Enqueues in a transaction left open, holding its lane's lock, until `release()`; then it commits. */
  const holdLane = async (options: EnqueueOptions) => {
    let inLane!: () => void;
    const enqueued = new Promise<void>((resolve) => (inLane = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const committed = db()
      .transaction()
      .execute(async (trx) => {
        await enqueue(trx, options);
        inLane();
        await held;
      });
    await Promise.race([enqueued, committed]);
    return { release, committed };
  };
  const recorded = async (id: string) =>
    (await db().selectFrom('events').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;

  it('a job enqueued in a transaction exists only if that transaction commits', async () => {
    await assert.rejects(
      db()
        .transaction()
        .execute(async (trx) => {
          await enqueue(trx, { type: 'tx', payload: { n: 1 }, now: T0 });
          throw new Error('rolled back');
        }),
    );
    await db()
      .transaction()
      .execute((trx) => enqueue(trx, { type: 'tx', payload: { n: 2 }, now: T0 }));
    const jobs = await claim('w', ['tx'], T0);
    assert.deepEqual(
      jobs.map((j) => j.payload),
      [{ n: 2 }],
    );
    assert.equal(await complete(jobs[0]!, T0), true);
  });

  it('claiming is atomic: concurrent workers never get the same job', async () => {
    // PostgreSQL: two pools, as two nodes have. SQLite: one connection, as one process has (a second
    // connection in the same process would block its own event loop on the file lock; separate
    // processes on one file are covered by the crash-recovery test).
    const another = test.handle.dialect.name === 'postgres' ? await test.openAnother() : test.handle;
    const jobCount = 60;
    await db()
      .transaction()
      .execute(async (trx) => {
        for (let i = 0; i < jobCount; i++) await enqueue(trx, { type: 'race', payload: { i }, now: T0 });
      });
    const seen: string[] = [];
    const workers = ['a', 'b', 'c', 'd'].map(async (name, index) => {
      const handle = index % 2 === 0 ? test.handle : another;
      for (;;) {
        const jobs = await claimJobs(handle.db, handle.dialect, {
          workerId: name,
          types: ['race'],
          limit: 3,
          now: T0,
          leaseMs: 15_000,
        });
        if (jobs.length === 0) return;
        seen.push(...jobs.map((j) => j.id));
        for (const job of jobs)
          await writeTransaction(handle.db, handle.dialect, (trx) => completeJob(trx, job, T0));
      }
    });
    await Promise.all(workers);
    assert.equal(seen.length, jobCount);
    assert.equal(new Set(seen).size, jobCount, 'each job claimed once');
  });

  it('a claimed job whose worker died comes back after its lease expires; the dead worker’s late answer changes nothing', async () => {
    await db()
      .transaction()
      .execute((trx) => enqueue(trx, { type: 'lease', payload: {}, now: T0 }));
    const [first] = await claim('dies', ['lease'], T0, 1, 10_000);
    assert.ok(first);
    assert.equal(first.attempts, 1);
    assert.deepEqual(await claim('other', ['lease'], at(9_999)), [], 'held while the lease lasts');
    const [again] = await claim('other', ['lease'], at(10_000));
    assert.ok(again, 'back after the lease expired');
    assert.equal(again.id, first.id);
    assert.equal(again.attempts, 2);
    assert.equal(await complete(first, at(10_001)), false, 'the lost claim cannot complete it');
    assert.deepEqual(await fail(first, at(10_001)), { outcome: 'lost' });
    assert.equal(await complete(again, at(10_002)), true);
  });

  it('a failure is retried with exponential backoff and jitter (first retry within 30 s), then dead-lettered at its attempt limit', async () => {
    for (let attempt = 1; attempt < 12; attempt++) {
      const low = retryDelayMs(attempt, () => 0);
      const high = retryDelayMs(attempt, () => 1);
      assert.ok(low >= high / 2 && low <= high);
      if (attempt === 1) assert.ok(high <= 30_000, 'Contract: first retry within 30 s');
      if (attempt > 1) assert.ok(high >= retryDelayMs(attempt - 1, () => 1), 'growing');
      assert.ok(high <= RETRY_MAX_MS);
    }
    await db()
      .transaction()
      .execute((trx) => enqueue(trx, { type: 'flaky', payload: {}, now: T0, maxAttempts: 3 }));
    let now = T0;
    for (let attempt = 1; attempt <= 3; attempt++) {
      const [job] = await claim('w', ['flaky'], now);
      assert.equal(job?.attempts, attempt);
      const outcome = await fail(job, now);
      if (attempt < 3) {
        assert.equal(outcome.outcome, 'retry');
        if (outcome.outcome !== 'retry') return;
        assert.deepEqual(
          await claim('w', ['flaky'], new Date(outcome.runAt.getTime() - 1)),
          [],
          'not before it is due',
        );
        now = outcome.runAt;
      } else {
        assert.deepEqual(outcome, { outcome: 'dead' });
      }
    }
    assert.deepEqual(await claim('w', ['flaky'], at(30 * 86_400_000)), []);
    const row = await db()
      .selectFrom('jobs')
      .selectAll()
      .where('type', '=', 'flaky')
      .executeTakeFirstOrThrow();
    assert.equal(row.status, 'dead');
    assert.equal(row.last_error, 'boom');
  });

  it('with a deadline a job is retried until the deadline (the last retry at it), then dead-lettered', async () => {
    const deadline = at(3_600_000);
    await db()
      .transaction()
      .execute((trx) => enqueue(trx, { type: 'window', payload: {}, now: T0, deadline }));
    let now = T0;
    const runs: number[] = [];
    for (;;) {
      const [job] = await claim('w', ['window'], now);
      assert.ok(job);
      runs.push(now.getTime() - T0.getTime());
      const outcome = await fail(job, now);
      if (outcome.outcome !== 'retry') {
        assert.equal(outcome.outcome, 'dead');
        break;
      }
      now = outcome.runAt;
    }
    assert.equal(runs.at(-1), 3_600_000, 'the last attempt is at the deadline');
    assert.ok(runs.length > 4 && runs.length < 12, `${runs.length} attempts`);
  });

  it('jobs of one lane run one at a time in enqueue order; a retrying head holds the lane, a dead one lets the next go', async () => {
    await db()
      .transaction()
      .execute(async (trx) => {
        for (const n of [1, 2, 3])
          await enqueue(trx, { type: 'lane', payload: { n }, now: T0, orderingKey: 'L' });
        await enqueue(trx, { type: 'lane', payload: { n: 'other lane' }, now: T0, orderingKey: 'M' });
      });
    const payloads = (jobs: ClaimedJob[]) => jobs.map((j) => j.payload.n).sort();
    const first = await claim('w', ['lane'], T0);
    assert.deepEqual(payloads(first), [1, 'other lane'], 'one head per lane');
    const one = first.find((j) => j.payload.n === 1)!;
    assert.equal(
      await complete(
        first.find((j) => j.payload.n === 'other lane')!,
        T0,
      ),
      true,
    );
    const retry = await fail(one, T0);
    assert.equal(retry.outcome, 'retry');
    assert.deepEqual(await claim('w', ['lane'], at(1_000)), [], 'job 2 waits while job 1 retries');
    const [oneAgain] = await claim('w', ['lane'], at(60_000));
    assert.equal(oneAgain?.payload.n, 1);
    assert.deepEqual(await fail(oneAgain, at(60_000), false), { outcome: 'dead' });
    const [two] = await claim('w', ['lane'], at(60_000));
    assert.equal(two?.payload.n, 2, 'skip ahead after a dead-letter');
    assert.deepEqual(await claim('w', ['lane'], at(60_000)), []);
    // Enqueued while the head runs: waits too.
    await db()
      .transaction()
      .execute((trx) => enqueue(trx, { type: 'lane', payload: { n: 4 }, now: at(60_000), orderingKey: 'L' }));
    assert.equal(await complete(two, at(60_001)), true);
    const [three] = await claim('w', ['lane'], at(60_001));
    assert.equal(three?.payload.n, 3);
    assert.equal(await complete(three, at(60_002)), true);
    const [four] = await claim('w', ['lane'], at(60_002));
    assert.equal(four?.payload.n, 4);
    assert.equal(await complete(four, at(60_003)), true);
    const lane = await db()
      .selectFrom('job_lanes')
      .selectAll()
      .where('key', '=', 'L')
      .executeTakeFirstOrThrow();
    assert.equal(Number(lane.active), 0);
    // An empty lane takes a new job at once.
    await db()
      .transaction()
      .execute((trx) => enqueue(trx, { type: 'lane', payload: { n: 5 }, now: at(60_003), orderingKey: 'L' }));
    const [five] = await claim('w', ['lane'], at(60_003));
    assert.equal(five?.payload.n, 5);
    assert.equal(five?.orderingSeq, 5);
  });

  it('finishing a lane’s head can hand the next job straight to the same worker, claimed in the same transaction', async () => {
    await db()
      .transaction()
      .execute(async (trx) => {
        for (const n of [1, 2])
          await enqueue(trx, { type: 'handoff', payload: { n }, now: T0, orderingKey: 'H' });
      });
    const [head] = await claim('w', ['handoff'], T0);
    assert.equal(head?.payload.n, 1);
    let taken: ClaimedJob | undefined;
    const done = await writeTransaction(db(), dialect(), (trx) =>
      completeJob(trx, head, T0, {
        workerId: 'w',
        leaseMs: 15_000,
        types: ['handoff'],
        take: (job) => {
          taken = job;
        },
      }),
    );
    assert.equal(done, true);
    assert.equal(taken?.payload.n, 2);
    assert.equal(taken?.attempts, 1);
    assert.equal(taken?.lockedBy, 'w');
    assert.deepEqual(await claim('other', ['handoff'], T0), [], 'already claimed');
    assert.equal(await complete(taken, T0), true);
  });

  it('settling a job writes its record with the outcome; a lost claim still records the attempt and changes nothing else', async () => {
    await db()
      .transaction()
      .execute((trx) => enqueue(trx, { type: 'settle', payload: {}, now: T0, maxAttempts: 2 }));
    const [job] = await claim('w', ['settle'], T0);
    const retry = await settleJob(db(), dialect(), job!, { error: 'boom', record: record('r1') }, T0, {
      random: () => 1,
    });
    assert.deepEqual(retry, { outcome: 'retry', runAt: at(20_000) });
    assert.equal(await recorded('r1'), true);
    const [again] = await claim('w', ['settle'], at(20_000));
    assert.equal(again?.attempts, 2);
    assert.deepEqual(
      await settleJob(db(), dialect(), job!, { error: null, record: record('r2') }, at(20_000)),
      {
        outcome: 'lost',
      },
    );
    assert.equal(await recorded('r2'), true, 'the first claim’s late attempt is recorded');
    assert.deepEqual(
      await settleJob(db(), dialect(), again, { error: 'boom' }, at(20_000)),
      { outcome: 'dead' },
      'attempts used up',
    );
  });

  it('a lane’s head settled while an enqueue to its lane commits hands that job on: none is left waiting', async () => {
    await db()
      .transaction()
      .execute((trx) => enqueue(trx, { type: 'race', payload: { n: 1 }, now: T0, orderingKey: 'R' }));
    const [head] = await claim('w', ['race'], T0);
    // The enqueue holds the lane's lock, uncommitted, while the head is settled.
    const enqueuing = await holdLane({ type: 'race', payload: { n: 2 }, now: T0, orderingKey: 'R' });
    let taken: ClaimedJob | undefined;
    const settling = settleJob(db(), dialect(), head!, { error: null }, T0, {
      handOff: { workerId: 'w', leaseMs: 15_000, types: ['race'], take: (job) => (taken = job) },
    });
    // Lets the settlement start (and, on PostgreSQL, take its snapshot) before the enqueue commits.
    await new Promise((resolve) => setTimeout(resolve, 50));
    enqueuing.release();
    await enqueuing.committed;
    assert.deepEqual(await settling, { outcome: 'done' });
    assert.equal(taken?.payload.n, 2, 'handed on, not left waiting');
    assert.equal(await complete(taken, T0), true);
  });

  it('several jobs settle in one go, each with its outcome and record; each lane hands on or makes due its next job; a lost claim changes nothing', async () => {
    await db()
      .transaction()
      .execute(async (trx) => {
        for (const lane of ['A', 'B'])
          for (const n of [1, 2])
            await enqueue(trx, {
              type: 'batch',
              payload: { lane, n },
              now: T0,
              orderingKey: `batch-${lane}`,
            });
        await enqueue(trx, { type: 'batch', payload: { lane: 'C' }, now: T0, maxAttempts: 2 });
        await enqueue(trx, { type: 'batch', payload: { lane: 'D' }, now: T0, maxAttempts: 1 });
        await enqueue(trx, { type: 'batch', payload: { lane: 'E' }, now: T0 });
      });
    const claimed = new Map((await claim('w', ['batch'], T0)).map((job) => [String(job.payload.lane), job]));
    const job = (lane: string) => claimed.get(lane) as ClaimedJob;
    assert.deepEqual([...claimed.keys()].sort(), ['A', 'B', 'C', 'D', 'E']);
    let taken: ClaimedJob | undefined;
    const handOff = {
      workerId: 'w',
      leaseMs: 15_000,
      types: ['batch'],
      take: (next: ClaimedJob) => (taken = next),
    };
    const results = await settleJobs(
      db(),
      dialect(),
      [
        { job: job('A'), settlement: { error: null, record: record('batch-A') }, handOff },
        { job: job('B'), settlement: { error: null, record: record('batch-B') } },
        { job: job('C'), settlement: { error: 'boom', record: record('batch-C') } },
        { job: job('D'), settlement: { error: 'boom' } },
        // A claim that is no longer this worker's (its lease expired and the job was claimed again).
        { job: { ...job('E'), attempts: 7 }, settlement: { error: null, record: record('batch-E') } },
      ],
      T0,
      { random: () => 1 },
    );
    assert.deepEqual(results, [
      { ok: true, outcome: { outcome: 'done' }, followers: [] },
      { ok: true, outcome: { outcome: 'done' }, followers: [] },
      { ok: true, outcome: { outcome: 'retry', runAt: at(20_000) }, followers: [] },
      { ok: true, outcome: { outcome: 'dead' }, followers: [] },
      { ok: true, outcome: { outcome: 'lost' }, followers: [] },
    ]);
    for (const id of ['batch-A', 'batch-B', 'batch-C', 'batch-E']) assert.equal(await recorded(id), true, id);
    assert.deepEqual(taken?.payload, { lane: 'A', n: 2 }, 'lane A’s next job is handed to the worker');
    assert.equal(taken?.lockedBy, 'w');
    const due = await claim('other', ['batch'], T0);
    assert.deepEqual(
      due.map((next) => next.payload),
      [{ lane: 'B', n: 2 }],
      'lane B’s next job is due; C waits for its retry, D is dead',
    );
    assert.equal(await complete(job('E'), T0), true, 'E still runs under its real claim');
    assert.ok(taken);
    for (const next of [taken, ...due]) assert.equal(await complete(next, T0), true);
  });

  it('a settlement that cannot be written fails alone: the others of its batch are written', async () => {
    await db()
      .transaction()
      .execute(async (trx) => {
        for (const n of [1, 2]) await enqueue(trx, { type: 'isolate', payload: { n }, now: T0 });
      });
    const [first, second] = await claim('w', ['isolate'], T0);
    assert.ok(first && second);
    await db().insertInto('events').values(record('isolate-taken').values).execute();
    const [broken, written] = await settleJobs(
      db(),
      dialect(),
      [
        // Its record's id is taken: the insert breaks the primary key.
        { job: first, settlement: { error: null, record: record('isolate-taken') } },
        { job: second, settlement: { error: null, record: record('isolate-written') } },
      ],
      T0,
    );
    assert.equal(broken?.ok, false);
    assert.deepEqual(written, { ok: true, outcome: { outcome: 'done' }, followers: [] });
    assert.equal(await recorded('isolate-written'), true);
    assert.equal(await complete(first, T0), true, 'nothing was written for the broken one: still claimed');
  });

  it(
    'a batch locks its lanes in key order, as emitters take them, also when every head has a next job',
    {
      skip: TEST_DATABASE_URL
        ? false
        : 'SQLite writes one transaction at a time: there are no row locks to order',
    },
    async () => {
      await db()
        .transaction()
        .execute(async (trx) => {
          for (const lane of ['order-A', 'order-B'])
            for (const n of [1, 2])
              await enqueue(trx, { type: 'order', payload: { lane, n }, now: T0, orderingKey: lane });
        });
      const heads = new Map((await claim('w', ['order'], T0)).map((job) => [String(job.payload.lane), job]));
      // An emitter holds lane B, uncommitted.
      const enqueuing = await holdLane({
        type: 'order',
        payload: { lane: 'order-B', n: 3 },
        now: T0,
        orderingKey: 'order-B',
      });
      // B's head first in the batch: locked in the batch's order, lane A would wait behind lane B.
      const settling = settleJobs(
        db(),
        dialect(),
        ['order-B', 'order-A'].map((lane) => ({
          job: heads.get(lane) as ClaimedJob,
          settlement: { error: null },
        })),
        T0,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      try {
        const other = await test.openAnother();
        await assert.rejects(
          sql`select key from job_lanes where key = 'order-A' for update nowait`.execute(other.db),
          { code: '55P03' },
          'lane A is locked by the batch while it waits for lane B',
        );
      } finally {
        // Released also when the check fails, so the batch and the emitter can finish.
        enqueuing.release();
      }
      await enqueuing.committed;
      assert.deepEqual(
        (await settling).map((result) => result.ok && result.outcome),
        [{ outcome: 'done' }, { outcome: 'done' }],
      );
    },
  );

  it('a worker claims only the job types it handles', async () => {
    await db()
      .transaction()
      .execute((trx) => enqueue(trx, { type: 'mail', payload: {}, now: T0 }));
    assert.deepEqual(await claim('w', ['sms'], T0), []);
    const [mail] = await claim('w', ['mail'], T0);
    assert.equal(mail?.type, 'mail');
    await complete(mail, T0);
  });

  describe('a lane run ahead: jobs waiting behind a claimed head, run before it is settled', () => {
    const enqueueLane = (type: string, lane: string, count: number) =>
      db()
        .transaction()
        .execute(async (trx) => {
          for (let n = 1; n <= count; n++)
            await enqueue(trx, {
              type,
              payload: { n },
              now: T0,
              orderingKey: lane,
              deadline: at(86_400_000),
            });
        });
    const jobRow = (id: string) =>
      db().selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const active = async (lane: string) =>
      Number(
        (
          await db()
            .selectFrom('job_lanes')
            .select('active')
            .where('key', '=', lane)
            .executeTakeFirstOrThrow()
        ).active,
      );
    const handOffTo = (workerId: string, types: string[]) => {
      const taken: ClaimedJob[] = [];
      const laneLastSeqs: number[] = [];
      const take = (job: ClaimedJob, laneLastSeq: number) => {
        taken.push(job);
        laneLastSeqs.push(laneLastSeq);
      };
      return { taken, laneLastSeqs, handOff: { workerId, leaseMs: 15_000, types, take } };
    };

    it('reads the jobs waiting behind a claimed head, in lane order, up to a job of a type it does not run', async () => {
      await db()
        .transaction()
        .execute(async (trx) => {
          for (const type of ['ahead', 'ahead', 'ahead', 'other', 'ahead'])
            await enqueue(trx, { type, payload: {}, now: T0, orderingKey: 'read' });
        });
      const [head] = await claim('w', ['ahead'], T0);
      assert.ok(head);
      const ahead = await readAhead(db(), head, ['ahead'], 10);
      assert.deepEqual(
        ahead.map((job) => [job.orderingSeq, job.attempts, job.lockedBy]),
        [
          [2, 1, ''],
          [3, 1, ''],
        ],
      );
      assert.deepEqual((await readAhead(db(), head, ['ahead'], 1)).length, 1, 'at most the limit');
      assert.deepEqual(
        await claim('other', ['ahead', 'other'], T0),
        [],
        'they still wait: nobody may claim them',
      );
    });

    it('followers are settled with the head in one write; the job after the last is handed on; a last follower that fails holds the lane', async () => {
      await enqueueLane('run', 'run', 5);
      const [head] = await claim('w', ['run'], T0);
      assert.ok(head);
      const [two, three, four] = await readAhead(db(), head, ['run'], 3);
      assert.ok(two && three && four);
      const first = handOffTo('w', ['run']);
      const [written] = await settleJobs(
        db(),
        dialect(),
        [
          {
            job: head,
            settlement: { error: null, record: record('run-1') },
            followers: [
              { job: two, settlement: { error: null, record: record('run-2') } },
              { job: three, settlement: { error: null, record: record('run-3') } },
            ],
            handOff: first.handOff,
          },
        ],
        T0,
      );
      assert.deepEqual(written, {
        ok: true,
        outcome: { outcome: 'done' },
        followers: [{ outcome: 'done' }, { outcome: 'done' }],
      });
      for (const id of ['run-1', 'run-2', 'run-3']) assert.equal(await recorded(id), true, id);
      for (const job of [two, three]) {
        const row = await jobRow(job.id);
        assert.deepEqual([row.status, Number(row.attempts), row.locked_by], ['done', 1, 'w']);
      }
      assert.deepEqual(
        first.taken.map((job) => [job.id, job.attempts, job.lockedBy]),
        [[four.id, 1, 'w']],
        'the job after the last follower is handed on',
      );
      assert.deepEqual(first.laneLastSeqs, [5], 'with the lane’s last job: five waits behind four');
      assert.equal(await active('run'), 2, 'four (running) and five (waiting) are left');
      assert.deepEqual(await claim('other', ['run'], T0), [], 'five waits behind four');

      const [five] = await readAhead(db(), first.taken[0] as ClaimedJob, ['run'], 3);
      assert.ok(five);
      const second = handOffTo('w', ['run']);
      const [failed] = await settleJobs(
        db(),
        dialect(),
        [
          {
            job: first.taken[0] as ClaimedJob,
            settlement: { error: null },
            followers: [{ job: five, settlement: { error: 'HTTP 503', record: record('run-5') } }],
            handOff: second.handOff,
          },
        ],
        T0,
        { random: () => 1 },
      );
      assert.deepEqual(failed, {
        ok: true,
        outcome: { outcome: 'done' },
        followers: [{ outcome: 'retry', runAt: at(20_000) }],
      });
      assert.deepEqual(second.taken, [], 'nothing comes after a job to retry');
      assert.equal(await recorded('run-5'), true);
      const row = await jobRow(five.id);
      assert.deepEqual([row.status, Number(row.attempts), row.last_error], ['queued', 1, 'HTTP 503']);
      assert.equal(await active('run'), 1);
      assert.deepEqual(await claim('other', ['run'], at(19_999)), [], 'five waits for its retry');
      const [again] = await claim('other', ['run'], at(20_000));
      assert.deepEqual([again?.id, again?.attempts], [five.id, 2]);
      assert.equal(await complete(again as ClaimedJob, at(20_000)), true);
      assert.equal(await active('run'), 0);
    });

    it('followers are written only under the head’s claim and only if every one still waits', async () => {
      await enqueueLane('guard', 'guard', 3);
      const [head] = await claim('w', ['guard'], T0);
      assert.ok(head);
      const followers = (await readAhead(db(), head, ['guard'], 5)).map((job, index) => ({
        job,
        settlement: { error: null, record: record(`guard-${String(index + 2)}`) },
      }));
      assert.equal(followers.length, 2);
      const [stale] = await settleJobs(
        db(),
        dialect(),
        [
          {
            job: { ...head, attempts: 7 },
            settlement: { error: null, record: record('guard-1') },
            followers,
          },
        ],
        T0,
      );
      assert.deepEqual(stale, {
        ok: true,
        outcome: { outcome: 'lost' },
        followers: [{ outcome: 'lost' }, { outcome: 'lost' }],
      });
      assert.equal(await recorded('guard-1'), true, 'the head’s attempt happened: recorded');
      assert.equal(await recorded('guard-2'), false, 'a follower not settled runs again: not recorded');

      // The last follower no longer waits (made due by someone else): none of them is written, and
      // the head hands on the first, which still waits.
      await db()
        .updateTable('jobs')
        .set({ run_at: T0.toISOString() })
        .where('id', '=', followers[1]?.job.id as string)
        .execute();
      const { taken, handOff } = handOffTo('w', ['guard']);
      const [guarded] = await settleJobs(
        db(),
        dialect(),
        [{ job: head, settlement: { error: null, record: record('guard-1b') }, followers, handOff }],
        T0,
      );
      assert.deepEqual(guarded, {
        ok: true,
        outcome: { outcome: 'done' },
        followers: [{ outcome: 'lost' }, { outcome: 'lost' }],
      });
      assert.equal(await recorded('guard-2'), false);
      assert.equal(await recorded('guard-3'), false);
      assert.deepEqual(
        taken.map((job) => [job.id, job.attempts]),
        [[followers[0]?.job.id, 1]],
      );
      assert.equal(await active('guard'), 2);
    });

    it('a run that goes on after a job to retry is refused, and changes nothing', async () => {
      await enqueueLane('refuse', 'refuse', 2);
      const [head] = await claim('w', ['refuse'], T0);
      assert.ok(head);
      const [two] = await readAhead(db(), head, ['refuse'], 1);
      const [refused] = await settleJobs(
        db(),
        dialect(),
        [
          {
            job: head,
            settlement: { error: 'boom' },
            followers: [{ job: two as ClaimedJob, settlement: { error: null } }],
          },
        ],
        T0,
      );
      assert.equal(refused?.ok, false);
      assert.equal((await jobRow(head.id)).status, 'running');
      assert.equal(await complete(head, T0), true);
    });
  });
});
