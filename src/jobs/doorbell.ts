import { sql, type Kysely } from 'kysely';
import { afterCommit, dialectOf, runsAfterCommit } from '../store/db/dialect.js';
import { JOBS_CHANNEL, NOTIFY_WORKERS, THIS_PROCESS } from '../store/db/postgres/job-channel.js';

/**
 * Wakes workers when a job is enqueued, so an event is delivered at once rather than at the next
 * poll. Two bells:
 * - in this process, a set of listeners (the one module-level set in Signery, on purpose: the
 *   enqueuing code holds only a transaction, not the app, and a ring carries no state — it only
 *   makes each listening worker look for due jobs now);
 * - across processes, on PostgreSQL, a NOTIFY sent with the enqueuing transaction, which the
 *   server delivers to every node's listening connection when (and only if) that transaction
 *   commits (see postgres/job-notifications.ts). SQLite has one writer host: its other processes
 *   (the CLI) find jobs by polling.
 */
const listeners = new Set<() => void>();

/**
 * Wakes this process's workers now. Called for jobs enqueued in a transaction that cannot ring after
 * its commit: the job may not be committed yet, so a woken worker also looks again shortly.
 */
export function ringDoorbell(): void {
  for (const listener of listeners) listener();
}

/** Returns the function that stops listening. */
export function listenToDoorbell(listener: () => void): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

/**
 * Rings both bells for a job enqueued in `trx`. In a transaction of `writeTransaction`, once it has
 * committed (so a woken worker finds the job on its first look): this process's workers, and other
 * nodes' by a NOTIFY sent after the commit (`notifyOtherNodes`). In any other transaction: this
 * process's workers now, other nodes' by a NOTIFY sent with the transaction (PostgreSQL collapses a
 * transaction's identical notifications into one).
 */
export async function ringDoorbellWith<DB>(trx: Kysely<DB>): Promise<void> {
  if (runsAfterCommit(trx)) {
    ringAfterCommit(trx);
    return;
  }
  if (dialectOf(trx).name === 'postgres') await sql`select ${NOTIFY_WORKERS}`.execute(trx);
  ringDoorbell();
}

/** Transactions that already ring after their commit: one ring each, however many jobs they enqueue. */
const ringing = new WeakSet<object>();

/**
 * Rings both bells once `trx` (a transaction of `writeTransaction`, which sent no NOTIFY) has
 * committed.
 */
function ringAfterCommit<DB>(trx: Kysely<DB>): void {
  if (ringing.has(trx)) return;
  ringing.add(trx);
  afterCommit(trx, (db) => {
    ringDoorbell();
    if (dialectOf(db).name === 'postgres') notifyOtherNodes(db);
  });
}

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
