import { createHash } from 'node:crypto';
import pg from 'pg';
import { Kysely, sql } from 'kysely';
import { postgresDialect, type DatabaseHandle } from '../dialect.js';
import type { Database } from '../schema.js';
import { JobNotifications } from './job-notifications.js';
import { SchemaScopedPostgresDialect } from './schema-introspector.js';

const TIMESTAMPTZ = 1184;
const TIMESTAMP = 1114;
const INT8 = 20;

/**
 * Type parsers for this pool only (pg's global ones would leak into other pools in one process):
 * timestamps come back as ISO strings like on SQLite, 64-bit integers as numbers.
 */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === TIMESTAMPTZ || oid === TIMESTAMP) return (value: string) => new Date(value).toISOString();
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
}): Promise<DatabaseHandle<Database>> {
  const { schema } = options;
  if (schema) {
    const admin = new pg.Client({ connectionString: options.url });
    await admin.connect();
    try {
      await admin.query(`create schema if not exists "${schema}"`);
    } finally {
      await admin.end();
    }
  }
  const connection: pg.ClientConfig = {
    connectionString: options.url,
    types,
    ...(schema ? { options: `-c search_path="${schema}"` } : {}),
  };
  const pool = new pg.Pool({ ...connection, max: options.maxConnections ?? 10 });
  const db = new Kysely<Database>({
    dialect: new SchemaScopedPostgresDialect({ pool: namedStatements(pool) }, schema ?? 'public'),
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

// Errors that mean a named statement cannot be reused as it was prepared: "cached plan must not change
// result type" (a table changed under it) and "prepared statement does not exist".
const STALE_STATEMENT = new Set(['0A000', '26000']);
// Queries worth preparing (not BEGIN, COMMIT, SET or DDL).
const STATEMENT = /^\s*(select|with|insert|update|delete)\b/i;
const MAX_NAMED_STATEMENTS = 1_000;

/**
 * Sends queries as named prepared statements, so PostgreSQL parses and plans each distinct query
 * once per connection instead of on every execution (measured: the planner took ≈ 350 µs of
 * PostgreSQL CPU per authenticated request; bench/README.md). Statements whose text varies with
 * their input (a multi-row insert) would fill each connection with plans used once: past
 * MAX_NAMED_STATEMENTS distinct texts, new ones go unnamed. A statement that went stale (a migration
 * changed a table under it) is run once unnamed, which is always correct.
 */
function namedStatements(pool: pg.Pool): pg.Pool {
  const names = new Map<string, string>();
  const nameOf = (text: string): string | undefined => {
    let name = names.get(text);
    if (!name && names.size < MAX_NAMED_STATEMENTS) {
      name = `s${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
      names.set(text, name);
    }
    return name;
  };
  const wrap = (client: pg.PoolClient): pg.PoolClient =>
    new Proxy(client, {
      get(target, property, receiver) {
        if (property !== 'query') return Reflect.get(target, property, receiver) as unknown;
        return (text: unknown, values?: unknown[]) => {
          const name = typeof text === 'string' && STATEMENT.test(text) ? nameOf(text) : undefined;
          if (typeof text !== 'string' || name === undefined) {
            return (target.query as (t: unknown, v?: unknown[]) => Promise<unknown>)(text, values);
          }
          return target.query({ name, text, values }).catch((error: { code?: string }) => {
            if (error.code && STALE_STATEMENT.has(error.code)) return target.query(text, values);
            throw error;
          });
        };
      },
    });
  return new Proxy(pool, {
    get(target, property, receiver) {
      if (property === 'connect') {
        return async () => wrap(await target.connect());
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
