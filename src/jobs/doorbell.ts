import { sql, type Kysely, type RawBuilder } from 'kysely';
import { dialectOf } from '../store/db/dialect.js';

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

/** Called by `enqueue`; the job may not be committed yet, so a woken worker also looks again shortly. */
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
 * The NOTIFY channel of the workers of the PostgreSQL schema a connection works in, as SQL: instances
 * sharing a database in schemas of their own do not wake each other. A channel is an identifier of
 * at most 63 bytes, hence the hash.
 */
export const JOBS_CHANNEL = `'signery_jobs_' || left(md5(current_schema()), 16)`;

/** Notifies the workers listening on JOBS_CHANNEL, when the transaction commits. */
export const NOTIFY_WORKERS: RawBuilder<unknown> = sql`pg_notify(${sql.raw(JOBS_CHANNEL)}, '')`;

/**
 * Rings both bells for a job enqueued in `trx`: this process's workers now, other nodes' when the
 * transaction commits (PostgreSQL collapses a transaction's identical notifications into one).
 */
export async function ringDoorbellWith<DB>(trx: Kysely<DB>): Promise<void> {
  if (dialectOf(trx).name === 'postgres') await sql`select ${NOTIFY_WORKERS}`.execute(trx);
  ringDoorbell();
}
