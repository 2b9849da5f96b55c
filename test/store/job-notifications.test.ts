import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { enqueue } from '../../src/jobs/queue.js';
import type { DatabaseHandle } from '../../src/store/db/dialect.js';
import { migrateToLatest } from '../../src/store/db/migrate.js';
import { openPostgres } from '../../src/store/db/postgres/postgres-database.js';
import type { Database } from '../../src/store/db/schema.js';
import { TEST_DATABASE_URL } from '../helpers/server.js';
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
    assert.ok(listening.listenForJobs);
    let wakeUps = 0;
    let connected = false;
    const stop = listening.listenForJobs(() => {
      // The first wake-up says the connection listens (it covers what was enqueued before).
      if (connected) wakeUps += 1;
      connected = true;
    });
    try {
      await waitFor(() => connected, 10_000, 'the listening connection');

      await enqueueIn(sameSchema);
      await waitFor(() => wakeUps === 1, 10_000, 'a wake-up for the committed enqueue');

      // Notifications arrive in commit order: had the rollback or the other schema's commit sent one,
      // it would arrive before the last commit's.
      await enqueueIn(sameSchema, false);
      await enqueueIn(otherSchema);
      await enqueueIn(sameSchema);
      await waitFor(() => wakeUps >= 2, 10_000, 'a wake-up for the second committed enqueue');
      assert.equal(wakeUps, 2);
    } finally {
      stop();
    }
  });
});
