import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { claimJobs, enqueue } from '../../src/jobs/queue.js';
import type { DatabaseHandle } from '../../src/store/db/dialect.js';
import { migrateToLatest } from '../../src/store/db/migrate.js';
import { openPostgres } from '../../src/store/db/postgres/postgres-database.js';
import type { Database } from '../../src/store/db/schema.js';
import { TEST_DATABASE_URL } from '../helpers/server.js';
import { settleJob } from '../jobs/settle-job.js';
import { waitFor } from '../webhooks/helpers.js';

// PostgreSQL only: SQLite has no NOTIFY (its workers poll). The SQLite run reports this as skipped.
const skip = TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL (runs in the PostgreSQL pass of CI)';

class Rollback extends Error {}

describe('cross-node wake-ups: DatabaseHandle.listenForJobs (LISTEN/NOTIFY)', { skip }, () => {
  const url = TEST_DATABASE_URL ?? '';
  const ours = `t_notify_${randomBytes(5).toString('hex')}`;
  const theirs = `t_notify_${randomBytes(5).toString('hex')}`;
  const handles: DatabaseHandle<Database>[] = [];
  const open = async (schema: string) => {
    const handle = await openPostgres({ url, schema });
    handles.push(handle);
    await migrateToLatest(handle);
    return handle;
  };
  const enqueueIn = (handle: DatabaseHandle<Database>, commit = true) =>
    handle.db
      .transaction()
      .execute(async (trx) => {
        await enqueue(trx, { type: 'test.notify', payload: {}, now: new Date() });
        if (!commit) throw new Rollback();
      })
      .catch((error: unknown) => {
        if (!(error instanceof Rollback)) throw error;
      });

  /** Subscribes to `listening`; counts the wake-ups after the first (which says it listens). */
  const countWakeUps = async () => {
    assert.ok(listening.listenForJobs);
    const counter = { wakeUps: 0, stop: () => undefined as void };
    let connected = false;
    counter.stop = listening.listenForJobs(() => {
      if (connected) counter.wakeUps += 1;
      connected = true;
    });
    await waitFor(() => connected, 10_000, 'the listening connection');
    return counter;
  };

  let listening: DatabaseHandle<Database>;
  let sameSchema: DatabaseHandle<Database>;
  let otherSchema: DatabaseHandle<Database>;
  before(async () => {
    listening = await open(ours);
    sameSchema = await open(ours);
    otherSchema = await open(theirs);
  });
  after(async () => {
    for (const handle of handles) await handle.close();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`drop schema if exists "${ours}" cascade`);
    await admin.query(`drop schema if exists "${theirs}" cascade`);
    await admin.end();
  });

  it('wakes a listener when another connection commits an enqueue in its schema, not for a rollback or another schema', async () => {
    const counter = await countWakeUps();
    try {
      await enqueueIn(sameSchema);
      await waitFor(() => counter.wakeUps === 1, 10_000, 'a wake-up for the committed enqueue');

      // Notifications arrive in commit order: had the rollback or the other schema's commit sent one,
      // it would arrive before the last commit's.
      await enqueueIn(sameSchema, false);
      await enqueueIn(otherSchema);
      await enqueueIn(sameSchema);
      await waitFor(() => counter.wakeUps >= 2, 10_000, 'a wake-up for the second committed enqueue');
      assert.equal(counter.wakeUps, 2);
    } finally {
      counter.stop();
    }
  });

  it('wakes a listener when a settlement makes the next job of a lane due without taking it', async () => {
    const counter = await countWakeUps();
    try {
      const { db, dialect } = sameSchema;
      const lane = { type: 'test.lane', payload: {}, orderingKey: `lane:${randomBytes(4).toString('hex')}` };
      await db.transaction().execute(async (trx) => {
        await enqueue(trx, { ...lane, now: new Date() });
        await enqueue(trx, { ...lane, now: new Date() });
      });
      await waitFor(() => counter.wakeUps === 1, 10_000, 'a wake-up for the enqueues');
      const now = new Date();
      const claim = { workerId: 'w', types: ['test.lane'], limit: 10, now, leaseMs: 60_000 };
      const [head, ...others] = await claimJobs(db, dialect, claim);
      assert.ok(head);
      assert.deepEqual(others, [], 'the second job waits behind its lane’s head');

      // No hand-off (a worker that is stopping): the next job is left due for any node's worker.
      await settleJob(db, dialect, head, { error: null }, now);
      await waitFor(() => counter.wakeUps === 2, 10_000, 'a wake-up for the lane’s next job');
      assert.equal((await claimJobs(db, dialect, claim)).length, 1);
    } finally {
      counter.stop();
    }
  });
});
