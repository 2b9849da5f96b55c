import type { Kysely } from 'kysely';
import { afterCommit, dialectOf, runsAfterCommit } from '../store/db/dialect.js';

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
 * nodes' by a NOTIFY sent after the commit (`JobChannel.notifyCommitted`). In any other transaction: this
 * process's workers now, other nodes' by a NOTIFY sent with the transaction (PostgreSQL collapses a
 * transaction's identical notifications into one).
 */
export async function ringDoorbellWith<DB>(trx: Kysely<DB>): Promise<void> {
  if (runsAfterCommit(trx)) {
    ringAfterCommit(trx);
    return;
  }
  await dialectOf(trx).jobChannel.notifyWith(trx);
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
    dialectOf(db).jobChannel.notifyCommitted(db);
  });
}
