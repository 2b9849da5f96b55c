import type {
  AliasableExpression,
  ColumnDataType,
  Expression,
  Kysely,
  RawBuilder,
  SelectQueryBuilder,
  SqlBool,
} from 'kysely';
import { CompiledQuery, PostgresAdapter, sql } from 'kysely';
import { jsonArrayFrom as postgresJsonArrayFrom } from 'kysely/helpers/postgres';
import { jsonArrayFrom as sqliteJsonArrayFrom } from 'kysely/helpers/sqlite';
import { postgresJobChannel } from './postgres/job-channel.js';
import { sqliteJobChannel } from './sqlite/job-channel.js';
import { postgresOutbox } from './postgres/outbox.js';
import { postgresEventFeed } from './postgres/event-feed.js';
import { sqliteEventFeed } from './sqlite/event-feed.js';
import type { EventFeed } from './event-feed.js';
import { sqliteOutbox } from './sqlite/outbox.js';
import type { Database, Json } from './schema.js';
import type { JobSettlement } from './job-rows.js';
import { postgresSettlement } from './postgres/job-settlement.js';
import { sqliteSettlement } from './sqlite/job-settlement.js';

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
  /**
   * The elements of `list`, a JSON array given as one parameter (JSON text), as rows of one column
   * `value`: one statement for many keys (`value ->> 0` is the first text of an element that is an
   * array, on both dialects), its text the same whatever the list's length.
   */
  jsonElements(list: unknown): AliasableExpression<unknown>;
  /**
   * The rows of `query` as one JSON array of objects (named by its selections, in its order), `[]`
   * when it has none: Kysely's helper for the dialect. SQLite answers JSON text, PostgreSQL parsed
   * JSON: read it with `readJson`.
   */
  jsonArrayFrom<O>(query: SelectQueryBuilder<never, never, O>): RawBuilder<Json>;
  /** How other nodes' workers hear of new jobs (store/db/<dialect>/job-channel.ts). */
  readonly jobChannel: JobChannel;
  /** How an event is written with its webhook deliveries (store/db/<dialect>/outbox.ts). */
  readonly outbox: Outbox;
  /** How a batch of job settlements is written (store/db/<dialect>/job-settlement.ts). */
  readonly jobSettlement: JobSettlement;
  /** How the events feed lists events after a cursor (store/db/<dialect>/event-feed.ts). */
  readonly eventFeed: EventFeed;
}

/** An event as the outbox writes it, with what each covering webhook's delivery job carries. */
export interface OutboxEntry {
  eventId: string;
  event: {
    tenantId: string;
    organizationId: string;
    documentId: string;
    event: string;
    actor: string;
  };
  /** The event's time (ISO): the event's, the jobs' and the deliveries'. */
  at: string;
  /** The delivery jobs' type, lane (this prefix and the webhook's id), request body and deadline (ISO). */
  jobType: string;
  lanePrefix: string;
  body: string;
  deadline: string;
  requestId: string | undefined;
}

/**
 * The outbox (core/events/emit-event.ts): in the caller's transaction, the event and, for each
 * webhook whose scope covers it (the tenant's tenant webhooks and its organization's), a delivery
 * and its job in the webhook's lane. `onDelivered` runs once a delivery job is written (to wake
 * the workers); it does not run without a covering webhook.
 */
export interface Outbox {
  write(trx: Kysely<Database>, entry: OutboxEntry, onDelivered: () => Promise<void>): Promise<void>;
}

/** The doorbell between nodes (jobs/doorbell.ts rings it): a NOTIFY on PostgreSQL, nothing on SQLite. */
export interface JobChannel {
  /** Tells other nodes' workers of the jobs `trx` enqueues, when (and only if) it commits. */
  notifyWith<DB>(trx: Kysely<DB>): Promise<void>;
  /** Tells other nodes' workers of jobs already committed; calls made meanwhile share one notification. */
  notifyCommitted<DB>(db: Kysely<DB>): void;
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
  jsonElements: (list: unknown) => sql`json_each(${list})`,
  jsonArrayFrom: <O>(query: SelectQueryBuilder<never, never, O>) =>
    sqliteJsonArrayFrom(query).$castTo<Json>(),
  jobChannel: sqliteJobChannel,
  outbox: sqliteOutbox,
  jobSettlement: sqliteSettlement,
  eventFeed: sqliteEventFeed,
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
  jsonElements: (list: unknown) => sql`jsonb_array_elements(${list}::jsonb)`,
  jsonArrayFrom: <O>(query: SelectQueryBuilder<never, never, O>) =>
    postgresJsonArrayFrom(query).$castTo<Json>(),
  jobChannel: postgresJobChannel,
  outbox: postgresOutbox,
  jobSettlement: postgresSettlement,
  eventFeed: postgresEventFeed,
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

/** A statement kept for the commit (`beforeCommit`), and what to do with its rows. */
interface KeptStatement {
  query: CompiledQuery;
  then: (rows: unknown[]) => Promise<void> | void;
}

/** What writeTransaction does around the commit of a transaction of its own. */
interface AroundCommit {
  /** Run once it has committed (`afterCommit`). */
  hooks: ((db: Kysely<never>) => void)[];
  /** PostgreSQL: sent with the COMMIT (`beforeCommit`). Undefined on SQLite, which runs them at once. */
  kept: KeptStatement[] | undefined;
}

/** By transaction: only writeTransaction's own are here. */
const aroundCommit = new WeakMap<object, AroundCommit>();

/**
 * Whether `trx` is a transaction run by `writeTransaction`, which can run code once it has committed
 * (`afterCommit`). A transaction begun any other way cannot.
 */
export function runsAfterCommit(trx: object): boolean {
  return aroundCommit.has(trx);
}

/**
 * Runs `hook` with the database once `trx` (a transaction for which `runsAfterCommit` is true) has
 * committed; never when it rolls back. The change is committed by then: a hook that throws is
 * ignored, so a hook must not be needed for correctness (a wake-up that a poll would also do).
 */
export function afterCommit<DB>(trx: Kysely<DB>, hook: (db: Kysely<DB>) => void): void {
  const around = aroundCommit.get(trx);
  if (!around) throw new Error('afterCommit: the transaction was not begun by writeTransaction');
  around.hooks.push(hook as unknown as (db: Kysely<never>) => void);
}

/**
 * The text by which writeTransaction hands the statements kept for its commit to the PostgreSQL
 * pool's clients (postgres/pooled-clients.ts), which send them and the COMMIT in one round trip.
 * Its parameters are the statements (FlightStatement); never sent to PostgreSQL as such.
 */
export const COMMIT_FLIGHT = '/* signery: the parameters, then COMMIT */';

/** One statement of a COMMIT_FLIGHT. */
export interface FlightStatement {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * Runs `query` as one of the last statements of `trx` and hands its rows to `then`. In a PostgreSQL
 * transaction of `writeTransaction` the statement is kept until `work` has returned, then sent
 * together with the COMMIT (one round trip for both, and the rows it locks are held only while
 * PostgreSQL runs it and commits); `then` runs before writeTransaction returns, and may call
 * `afterCommit`. When the statement fails, so does the transaction. Anywhere else the statement runs
 * at once. Meant for a statement whose rows nothing else in the transaction reads: an event's
 * deliveries, which lock their webhooks' lanes.
 *
 * ```ts
 * await beforeCommit(trx, sql`insert into events … returning id`.compile(trx), (rows) => {
 *   if (rows.length > 0) wake();
 * });
 * ```
 */
export async function beforeCommit<DB>(
  trx: Kysely<DB>,
  query: CompiledQuery,
  then: (rows: unknown[]) => Promise<void> | void,
): Promise<void> {
  const kept = aroundCommit.get(trx)?.kept;
  if (kept) {
    kept.push({ query, then });
    return;
  }
  const { rows } = await trx.executeQuery(query);
  await then(rows);
}

/** Sends the statements kept for the commit of `trx`, with the COMMIT, and hands each its rows. */
async function sendKeptStatements<DB>(trx: Kysely<DB>, kept: readonly KeptStatement[]): Promise<void> {
  if (kept.length === 0) return;
  const statements: FlightStatement[] = kept.map(({ query }) => ({
    sql: query.sql,
    parameters: query.parameters,
  }));
  const { rows } = await trx.executeQuery(CompiledQuery.raw(COMMIT_FLIGHT, statements));
  for (const [index, { then }] of kept.entries()) await then((rows[index] as unknown[] | undefined) ?? []);
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
 * transaction is enough there. What `work` hands to `afterCommit` runs once the commit is done; on
 * PostgreSQL, what it hands to `beforeCommit` goes with the COMMIT.
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
  const hooks: AroundCommit['hooks'] = [];
  const result =
    dialect.name !== 'sqlite'
      ? await db.transaction().execute(async (trx) => {
          const kept: KeptStatement[] = [];
          aroundCommit.set(trx, { hooks, kept });
          const result = await work(trx);
          await sendKeptStatements(trx, kept);
          return result;
        })
      : // One connection reserved for the whole transaction: Kysely's SQLite driver has a single
        // connection behind a mutex, so nothing else of this process interleaves.
        await db.connection().execute(async (connection) => {
          aroundCommit.set(connection, { hooks, kept: undefined });
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
