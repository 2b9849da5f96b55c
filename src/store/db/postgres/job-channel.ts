import { randomUUID } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';

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
