import pg from 'pg';
import { Kysely, sql } from 'kysely';
import { postgresDialect, type DatabaseHandle } from '../dialect.js';
import type { Database } from '../schema.js';
import { JobNotifications } from './job-notifications.js';
import { pooledClients } from './pooled-clients.js';
import { SchemaScopedPostgresDialect } from './schema-introspector.js';

const TIMESTAMPTZ = 1184;
const TIMESTAMP = 1114;
const INT8 = 20;
const CONNECT_TIMEOUT_MS = 5_000;
const UNIQUE_VIOLATION = '23505';
const DUPLICATE_SCHEMA = '42P06';
/** How much longer than PostgreSQL's statement_timeout a connection has to answer before it is dropped. */
const DEADLINE_GRACE_MS = 2_000;
/** A transaction left idle this long (its node died holding it) is ended by PostgreSQL, releasing its locks. */
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;

/** PostgreSQL's text form of a `timestamptz` in UTC: `2026-11-24 21:44:10.267+00`. */
const UTC_TIMESTAMPTZ = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00$/;

/**
 * A `timestamptz` as an ISO string with milliseconds, as `Date.toISOString` writes it (and SQLite
 * stores it). One in UTC (the server's usual zone) is rewritten directly: `Date`'s parser, for
 * anything but ISO text, took several percent of a page of search results.
 *
 * ```ts
 * isoTimestamp('2026-11-24 21:44:10.2675+00'); // '2026-11-24T21:44:10.267Z'
 * ```
 */
export function isoTimestamp(value: string): string {
  const utc = UTC_TIMESTAMPTZ.exec(value);
  if (!utc) return new Date(value).toISOString();
  return `${utc[1]}T${utc[2]}.${(utc[3] ?? '').padEnd(3, '0').slice(0, 3)}Z`;
}

/**
 * Type parsers for this pool only (pg's global ones would leak into other pools in one process):
 * timestamps come back as ISO strings like on SQLite, 64-bit integers as numbers.
 */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === TIMESTAMPTZ) return isoTimestamp;
    if (oid === TIMESTAMP) return (value: string) => new Date(value).toISOString();
    if (oid === INT8) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format ?? 'text') as (value: string) => unknown;
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * Opens a PostgreSQL database. With `schema`, the schema is created when missing and every
 * connection works inside it, so several instances (or test runs) can share one database.
 *
 * ```ts
 * const handle = await openPostgres({ url: 'postgres://postgres@127.0.0.1:5432/signery' });
 * ```
 */
export async function openPostgres(options: {
  url: string;
  schema?: string | undefined;
  maxConnections?: number;
  /** PostgreSQL's statement_timeout for every connection of the pool (0 or unset: none). */
  statementTimeoutMs?: number;
}): Promise<DatabaseHandle<Database>> {
  const { schema } = options;
  if (schema) {
    const admin = new pg.Client({ connectionString: options.url });
    await admin.connect();
    try {
      await admin.query(`create schema if not exists "${schema}"`).catch((error: { code?: string }) => {
        // Nodes starting together race to create it, and PostgreSQL's IF NOT EXISTS does not cover the
        // race: the loser fails on the catalog's unique index. The schema exists, which is all we need.
        if (error.code !== UNIQUE_VIOLATION && error.code !== DUPLICATE_SCHEMA) throw error;
      });
    } finally {
      await admin.end();
    }
  }
  const connection: pg.ClientConfig = {
    connectionString: options.url,
    types,
    // A connection that cannot be made in time fails its request (503) instead of holding it, and
    // kept-alive sockets notice a peer that vanished without closing them.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    options: sessionSettings(schema, options.statementTimeoutMs ?? 0),
  };
  const pool = new pg.Pool({ ...connection, max: options.maxConnections ?? 10 });
  // An idle pooled connection that PostgreSQL closes (a restart, a failover, pg_terminate_backend)
  // or whose socket breaks is reported here; pg has already removed it from the pool and the next
  // query opens a new one. Without a listener the 'error' event would end the process.
  pool.on('error', () => undefined);
  // A connection lost while a request holds it (between the statements of a transaction) is reported
  // on the client itself, which the pool listens to only while it idles: without this the process
  // would end. The request's next statement fails instead (503), and the pool drops the client when
  // it is given back (no longer queryable).
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({
    dialect: new SchemaScopedPostgresDialect(
      {
        pool: pooledClients(pool, {
          deadlineMs: options.statementTimeoutMs ? options.statementTimeoutMs + DEADLINE_GRACE_MS : 0,
        }),
      },
      schema ?? 'public',
    ),
  });
  const notifications = new JobNotifications(connection);
  return {
    db,
    dialect: postgresDialect,
    schema: schema ?? 'public',
    listenForJobs: (listener, onError) => notifications.subscribe(listener, onError),
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      notifications.close();
      await db.destroy();
    },
  };
}

/**
 * The settings every connection starts with: the schema, PostgreSQL's statement time-out (a slow
 * statement is cancelled there, `57014`, and answered 503) and the idle-in-transaction time-out.
 */
function sessionSettings(schema: string | undefined, statementTimeoutMs: number): string {
  return [
    ...(schema ? [`-c search_path="${schema}"`] : []),
    `-c statement_timeout=${statementTimeoutMs}`,
    `-c idle_in_transaction_session_timeout=${IDLE_IN_TRANSACTION_TIMEOUT_MS}`,
  ].join(' ');
}
