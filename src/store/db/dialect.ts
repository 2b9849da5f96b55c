import type { ColumnDataType, Expression, Kysely, SqlBool } from 'kysely';
import { PostgresAdapter, sql } from 'kysely';

/**
 * The few places where SQLite and PostgreSQL differ, in one module (DESIGN: Storage).
 * Everything else goes through Kysely's query builder unchanged.
 */
export interface SqlDialect {
  readonly name: 'sqlite' | 'postgres';
  /** Column type for JSON documents. */
  readonly jsonType: ColumnDataType;
  /** Column type for ISO timestamps. */
  readonly timestampType: ColumnDataType;
  /** Column type of an auto-incrementing 64-bit primary key. */
  readonly serialType: ColumnDataType;
  /** Casts a JSON text parameter to the JSON column type. */
  json(value: string): Expression<unknown>;
  /**
   * Whether `SELECT … FOR UPDATE SKIP LOCKED` exists (PostgreSQL). SQLite has no row locks: one
   * writer at a time, taken up front by `writeTransaction`.
   */
  readonly skipLocked: boolean;
  /**
   * `column` is one of the texts of `list`, a single parameter made by `textList`: the statement's
   * text does not change with the list's length, so it is compiled and prepared once.
   */
  isInTextList(column: string, list: unknown): Expression<SqlBool>;
  /** A list of texts as the one parameter `isInTextList` expects (an array; JSON text on SQLite). */
  textList(values: readonly string[]): unknown;
}

export const sqliteDialect: SqlDialect = Object.freeze({
  name: 'sqlite',
  jsonType: 'text',
  timestampType: 'text',
  serialType: 'integer',
  json: (value: string) => sql`${value}`,
  skipLocked: false,
  isInTextList: (column: string, list: unknown) =>
    sql<SqlBool>`${sql.ref(column)} in (select value from json_each(${list}))`,
  textList: (values: readonly string[]) => JSON.stringify(values),
});

export const postgresDialect: SqlDialect = Object.freeze({
  name: 'postgres',
  jsonType: 'jsonb',
  timestampType: 'timestamptz',
  serialType: 'bigserial',
  json: (value: string) => sql`${value}::jsonb`,
  skipLocked: true,
  isInTextList: (column: string, list: unknown) => sql<SqlBool>`${sql.ref(column)} = any(${list}::text[])`,
  textList: (values: readonly string[]) => values,
});

/**
 * The dialect behind a Kysely instance or transaction, for code that receives only `trx` (an event
 * emitted inside a document change).
 */
export function dialectOf<DB>(db: Kysely<DB>): SqlDialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? postgresDialect : sqliteDialect;
}

/** The open database: Kysely, the dialect's differences, and its lifecycle. */
export interface DatabaseHandle<DB> {
  readonly db: Kysely<DB>;
  readonly dialect: SqlDialect;
  /** The PostgreSQL schema everything lives in (undefined on SQLite). */
  readonly schema: string | undefined;
  /**
   * PostgreSQL: calls `listener` when a transaction that enqueued a job commits on any node sharing
   * the schema (LISTEN/NOTIFY; jobs/doorbell.ts), until the returned function is called; `onError`
   * hears of a lost listening connection (it is opened again). Absent on SQLite.
   */
  readonly listenForJobs?:
    ((listener: () => void, onError?: (error: unknown) => void) => () => void) | undefined;
  /** Resolves when the database answers a query (readiness probe). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** What writeTransaction runs once a transaction of its own has committed, by transaction. */
const commitHooks = new WeakMap<object, ((db: Kysely<never>) => void)[]>();

/**
 * Whether `trx` is a transaction run by `writeTransaction`, which can run code once it has committed
 * (`afterCommit`). A transaction begun any other way cannot.
 */
export function runsAfterCommit(trx: object): boolean {
  return commitHooks.has(trx);
}

/**
 * Runs `hook` with the database once `trx` (a transaction for which `runsAfterCommit` is true) has
 * committed; never when it rolls back. The change is committed by then: a hook that throws is
 * ignored, so a hook must not be needed for correctness (a wake-up that a poll would also do).
 */
export function afterCommit<DB>(trx: Kysely<DB>, hook: (db: Kysely<DB>) => void): void {
  const hooks = commitHooks.get(trx);
  if (!hooks) throw new Error('afterCommit: the transaction was not begun by writeTransaction');
  hooks.push(hook as unknown as (db: Kysely<never>) => void);
}

function runCommitHooks<DB>(db: Kysely<DB>, hooks: ((db: Kysely<never>) => void)[]): void {
  for (const hook of hooks) {
    try {
      hook(db as unknown as Kysely<never>);
    } catch {
      // Committed already; see afterCommit.
    }
  }
}

/**
 * Runs `work` in a transaction that writes. On SQLite it starts with `BEGIN IMMEDIATE`, which takes
 * the write lock before the first read: a deferred `BEGIN` that reads and then writes fails with
 * SQLITE_BUSY when another process on the same file (a second node, the CLI) committed in between,
 * and the busy timeout cannot help it. PostgreSQL locks rows as they are written, so a plain
 * transaction is enough there. What `work` hands to `afterCommit` runs once the commit is done.
 *
 * ```ts
 * const claimed = await writeTransaction(db, dialect, (trx) => trx.updateTable('jobs')…execute());
 * ```
 */
export async function writeTransaction<DB, T>(
  db: Kysely<DB>,
  dialect: SqlDialect,
  work: (trx: Kysely<DB>) => Promise<T>,
): Promise<T> {
  const hooks: ((db: Kysely<never>) => void)[] = [];
  const result =
    dialect.name !== 'sqlite'
      ? await db.transaction().execute((trx) => {
          commitHooks.set(trx, hooks);
          return work(trx);
        })
      : // One connection reserved for the whole transaction: Kysely's SQLite driver has a single
        // connection behind a mutex, so nothing else of this process interleaves.
        await db.connection().execute(async (connection) => {
          commitHooks.set(connection, hooks);
          await sql`begin immediate`.execute(connection);
          try {
            const result = await work(connection);
            await sql`commit`.execute(connection);
            return result;
          } catch (error) {
            // SQLite may already have rolled back on its own (SQLITE_FULL, SQLITE_IOERR, a failed
            // commit); `rollback` then fails too, and the error worth reporting is still the one that
            // stopped the work.
            await sql`rollback`.execute(connection).catch(() => undefined);
            throw error;
          }
        });
  runCommitHooks(db, hooks);
  return result;
}
