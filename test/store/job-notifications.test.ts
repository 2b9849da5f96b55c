import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { KyselyPlugin } from 'kysely';
import pg from 'pg';
import { THIS_PROCESS } from '../../src/store/db/postgres/job-channel.js';
import { claimJobs, enqueue } from '../../src/jobs/queue.js';
import { writeTransaction, type DatabaseHandle } from '../../src/store/db/dialect.js';
import { emitEvent } from '../../src/core/events/emit-event.js';
import { migrateToLatest } from '../../src/store/db/migrate.js';
import { openPostgres } from '../../src/store/db/postgres/postgres-database.js';
import type { Database } from '../../src/store/db/schema.js';
import { listenToJobChannel, type ChannelListener } from '../helpers/notifications.js';
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

describe(
  'wake-ups after the commit of a writeTransaction (one NOTIFY for the commits that come together)',
  { skip },
  () => {
    const url = TEST_DATABASE_URL ?? '';
    const schema = `t_notify_${randomBytes(5).toString('hex')}`;
    let handle: DatabaseHandle<Database>;
    let other: DatabaseHandle<Database>;
    let listener: ChannelListener;
    let heard: string[];

    before(async () => {
      handle = await openPostgres({ url, schema });
      await migrateToLatest(handle);
      other = await openPostgres({ url, schema });
      listener = await listenToJobChannel(url, schema);
      heard = listener.heard;
    });
    after(async () => {
      await listener.close();
      await other.close();
      await handle.close();
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`drop schema if exists "${schema}" cascade`);
      await admin.end();
    });

    const enqueueJob = (trx: Parameters<typeof enqueue>[0]) =>
      enqueue(trx, { type: 'test.after-commit', payload: {}, now: new Date() });
    /** Waits until the channel listener has heard `count` notifications, then a little longer for strays. */
    const heardAfter = async (count: number) => {
      await waitFor(() => heard.length >= count, 10_000, `${count} notifications`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      return heard.splice(0);
    };

    it('an enqueue wakes other nodes by a NOTIFY sent after the commit, carrying this process; a rollback sends none', async () => {
      await writeTransaction(handle.db, handle.dialect, async (trx) => {
        await enqueueJob(trx);
        await enqueueJob(trx);
      });
      // Sent with the transaction it would carry an empty payload.
      assert.deepEqual(await heardAfter(1), [THIS_PROCESS]);

      await writeTransaction(handle.db, handle.dialect, async (trx) => {
        await enqueueJob(trx);
        throw new Rollback();
      }).catch((error: unknown) => {
        if (!(error instanceof Rollback)) throw error;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(heard.splice(0), []);
    });

    it('an event emitted in a writeTransaction sends no NOTIFY of its own: one after the commit', async () => {
      const now = new Date().toISOString();
      const tenantId = randomUUID();
      const organizationId = randomUUID();
      await handle.db
        .insertInto('tenants')
        .values({ id: tenantId, name: `t-${tenantId}`, properties: '{}', counters: '{}', created_at: now })
        .execute();
      await handle.db
        .insertInto('organizations')
        .values({ id: organizationId, tenant_id: tenantId, name: 'o', created_at: now })
        .execute();
      await handle.db
        .insertInto('webhooks')
        .values({
          id: randomUUID(),
          tenant_id: tenantId,
          type: 'organization',
          organization_id: organizationId,
          name: 'w',
          callback_url: 'http://127.0.0.1:9/',
          hmac_secret: 'secret',
          creator_id: 'test',
          creator_name: 'test',
          created_at: now,
        })
        .execute();
      const event = {
        tenantId,
        organizationId,
        documentId: 'd',
        event: 'documentEdited' as const,
        actor: 'a',
        at: new Date(),
      };
      const { eventId } = await writeTransaction(handle.db, handle.dialect, (trx) => emitEvent(trx, event));
      const deliveries = await handle.db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('event_id', '=', eventId)
        .execute();
      assert.equal(deliveries.length, 1);
      assert.deepEqual(await heardAfter(1), [THIS_PROCESS]);
      // Outside writeTransaction the transaction sends its own NOTIFY, when it commits.
      await handle.db.transaction().execute((trx) => emitEvent(trx, event));
      assert.deepEqual(await heardAfter(1), ['']);
    });

    it('commits that come while a NOTIFY is being sent share the next one', async () => {
      // Holds the first NOTIFY statement's answer until five more transactions have committed.
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      const notifies = new Set<unknown>();
      let sent = 0;
      const gate: KyselyPlugin = {
        transformQuery: (args) => {
          if (args.node.kind === 'RawNode' && args.node.sqlFragments.join('').includes('pg_notify'))
            notifies.add(args.queryId);
          return args.node;
        },
        transformResult: async (args) => {
          if (notifies.has(args.queryId)) {
            sent++;
            if (sent === 1) await held;
          }
          return args.result;
        },
      };
      const db = handle.db.withPlugin(gate);
      await writeTransaction(db, handle.dialect, enqueueJob);
      await waitFor(() => sent === 1, 10_000, 'the first NOTIFY');
      for (let i = 0; i < 5; i++) await writeTransaction(db, handle.dialect, enqueueJob);
      assert.equal(sent, 1, 'nothing else is sent while the first is under way');
      release();
      await waitFor(() => sent === 2, 10_000, 'the NOTIFY for the five commits');
      assert.deepEqual(await heardAfter(2), [THIS_PROCESS, THIS_PROCESS]);
      assert.equal(sent, 2);
    });

    it('a node’s listening connection ignores the NOTIFY its own process sent, and hears every other', async () => {
      assert.ok(other.listenForJobs);
      let wakeUps = 0;
      let connected = false;
      const stop = other.listenForJobs(() => {
        if (connected) wakeUps += 1;
        connected = true;
      });
      try {
        await waitFor(() => connected, 10_000, 'the listening connection');
        const { client, channel } = listener;
        // In order: had the first woken the listener, the count would reach 2 with the second.
        await client.query('select pg_notify($1, $2)', [channel, THIS_PROCESS]);
        await client.query('select pg_notify($1, $2)', [channel, 'another process']);
        await waitFor(() => wakeUps >= 1, 10_000, 'a wake-up for the other process');
        await new Promise((resolve) => setTimeout(resolve, 200));
        assert.equal(wakeUps, 1);
      } finally {
        stop();
        heard.splice(0);
      }
    });
  },
);
