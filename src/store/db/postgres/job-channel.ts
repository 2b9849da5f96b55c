import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { JobChannel } from '../dialect.js';

/**
 * The NOTIFY channel of the workers of the PostgreSQL schema a connection works in, as SQL: instances
 * sharing a database in schemas of their own do not wake each other. A channel is an identifier of
 * at most 63 bytes, hence the hash.
 */
export const JOBS_CHANNEL = `'signery_jobs_' || left(md5(current_schema()), 16)`;

/** Notifies the workers listening on JOBS_CHANNEL, when the transaction commits. */
export const NOTIFY_WORKERS: RawBuilder<unknown> = sql`pg_notify(${sql.raw(JOBS_CHANNEL)}, '')`;

/**
 * The payload of the NOTIFY this process sends after its own commits (`notifyOtherNodes`): its
 * workers were woken in the process already, so its listening connection ignores it.
 */
export const THIS_PROCESS = randomUUID();

/** PostgreSQL: other nodes' workers hear of new jobs by NOTIFY on JOBS_CHANNEL (postgres/job-notifications.ts). */
export const postgresJobChannel: JobChannel = Object.freeze({
  notifyWith: async <DB>(trx: Kysely<DB>) => {
    await sql`select ${NOTIFY_WORKERS}`.execute(trx);
  },
  notifyCommitted: <DB>(db: Kysely<DB>) => notifyOtherNodes(db),
});

/** Per database: whether a NOTIFY statement is being sent, and whether commits came meanwhile. */
const notifying = new WeakMap<object, { again: boolean }>();

/**
 * Sends a NOTIFY for jobs already committed, one statement at a time: commits that come while one is
 * being sent share the next. A NOTIFY inside each enqueuing transaction costs PostgreSQL a lock and a
 * signal to every listening backend on each commit, and each listening node a wake-up; this sends at
 * most one per round trip, however many commits (bench/README.md: Webhooks). A NOTIFY that fails, or
 * a process that stops between the commit and the NOTIFY, delays other nodes' workers until their
 * next poll; nothing is lost.
 */
function notifyOtherNodes<DB>(db: Kysely<DB>): void {
  const state = notifying.get(db);
  if (state) {
    state.again = true;
    return;
  }
  const sending = { again: false };
  notifying.set(db, sending);
  const send = (): void => {
    sql`select pg_notify(${sql.raw(JOBS_CHANNEL)}, ${THIS_PROCESS})`
      .execute(db)
      .catch(() => undefined)
      .finally(() => {
        if (!sending.again) {
          notifying.delete(db);
          return;
        }
        sending.again = false;
        send();
      });
  };
  send();
}
