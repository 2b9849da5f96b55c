import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import pg from 'pg';
import { COMMIT_FLIGHT, type FlightStatement } from '../dialect.js';

// Errors that mean a named statement cannot be reused as it was prepared: "cached plan must not change
// result type" (a table changed under it) and "prepared statement does not exist".
const STALE_STATEMENT = new Set(['0A000', '26000']);
// Queries worth preparing (not BEGIN, COMMIT, SET or DDL).
const STATEMENT = /^\s*(select|with|insert|update|delete)\b/i;
const MAX_NAMED_STATEMENTS = 1_000;

// pg's own conversion of a parameter to its wire text (Dates, arrays, JSON), the one its Bind uses.
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as {
  prepareValue: (value: unknown) => unknown;
};

/** What pg's connection keeps of the statements prepared on it, and the messages it sends. */
interface WireConnection extends pg.Connection {
  parsedStatements: Record<string, string | undefined>;
  submittedNamedStatements: Record<string, string | undefined>;
}

/** The parts of pg's Query that a query sending its own messages overrides or reads. */
interface QueryInternals {
  readonly text: string;
  readonly name: string | undefined;
  callback: ((error: Error | null, result: unknown) => void) | undefined;
  prepare(connection: WireConnection): void;
}

/** A pg result as far as Kysely reads it. */
interface Answer {
  command: string;
  rowCount: number | null;
  rows: unknown[];
}

/** One statement of a flight: its text, its prepared statement's name (if any), its parameters. */
interface Part {
  text: string;
  name: string | undefined;
  values: unknown[];
}

const BEGIN: Part = { text: 'begin', name: undefined, values: [] };
const COMMIT: Part = { text: 'commit', name: undefined, values: [] };

const QueryBase = pg.Query as unknown as new (config: {
  text: string;
  name?: string | undefined;
  values?: unknown[];
  queryMode?: 'extended';
}) => pg.Query & QueryInternals;

/**
 * Several statements sent in one write and answered in one read: each one's Bind and Execute (and
 * Parse, unless its named statement is prepared on this connection), then a single Sync. PostgreSQL
 * runs them in order and skips the rest after an error, so `[BEGIN, statement]` or
 * `[statements…, COMMIT]` cost one round trip instead of one each, and a COMMIT never runs after a
 * statement that failed.
 */
class Flight extends QueryBase {
  readonly #parts: readonly Part[];

  constructor(parts: readonly Part[]) {
    // pg wants a text; the parts' own are what is sent.
    super({ text: 'flight', queryMode: 'extended' });
    this.#parts = parts;
  }

  override prepare(connection: WireConnection): void {
    // The parts' messages without the Sync each would end with; one Sync after the last.
    const withoutSync = Object.create(connection, { sync: { value: () => undefined } }) as WireConnection;
    for (const part of this.#parts) {
      // A statement is parsed under its name only by a Prepare of its own (below), whose answer pg
      // records; one not prepared yet is parsed unnamed here, for this flight only.
      const name = part.name !== undefined && isPrepared(connection, part.name) ? part.name : undefined;
      new QueryBase({ text: part.text, name, values: part.values, queryMode: 'extended' }).prepare(
        withoutSync,
      );
    }
    connection.sync();
  }
}

/** Parses a named statement and nothing else: pg records it as prepared on this connection. */
class Prepare extends QueryBase {
  constructor(text: string, name: string) {
    super({ text, name, queryMode: 'extended' });
  }

  override prepare(connection: WireConnection): void {
    const name = this.name ?? '';
    // Two flights queued together may both have asked for it: the second only syncs.
    if (!isPrepared(connection, name)) {
      connection.parse({ text: this.text, name, types: [] }, false);
      connection.submittedNamedStatements[name] = this.text;
    }
    connection.sync();
  }
}

function isPrepared(connection: WireConnection, name: string): boolean {
  return (
    connection.parsedStatements[name] !== undefined || connection.submittedNamedStatements[name] !== undefined
  );
}

/** Submits a query object to pg and resolves with what its callback gets. */
function submit<T>(client: pg.PoolClient, query: pg.Query & QueryInternals): Promise<T> {
  return new Promise((resolve, reject) => {
    query.callback = (error, result) => (error ? reject(error) : resolve(result as T));
    client.query(query);
  });
}

/** Where a checked-out client stands in the transaction that Kysely runs on it. */
interface TransactionState {
  /** BEGIN was asked for and not sent yet: it goes out with the next statement. */
  beginPending: boolean;
  /** A flight ended the transaction with COMMIT: Kysely's own COMMIT (or ROLLBACK) is answered here. */
  committed: boolean;
}

/**
 * Wraps a pg pool so that what Kysely sends costs as few round trips as it can:
 * - Queries go as named prepared statements, so PostgreSQL parses and plans each distinct query
 *   once per connection instead of on every execution (measured: the planner took ≈ 350 µs of
 *   PostgreSQL CPU per authenticated request; bench/README.md). Statements whose text varies with
 *   their input (a multi-row insert) would fill each connection with plans used once: past
 *   MAX_NAMED_STATEMENTS distinct texts, new ones go unnamed. A statement that went stale (a
 *   migration changed a table under it) is run once unnamed, which is always correct.
 * - A transaction's BEGIN is not sent alone: it goes in one flight with the transaction's first
 *   statement (a transaction that sends none costs nothing).
 * - The statements that `writeTransaction` keeps for its commit (`beforeCommit`) go in one flight
 *   with the COMMIT; Kysely's COMMIT that follows is answered without a round trip.
 * Each is a round trip less (on the machines measured, 50–200 µs of CPU on each side of the
 * socket), and a row locked by the last statements is held only while PostgreSQL runs them and
 * the COMMIT, not while the answer travels to Node, waits for its turn there, and the COMMIT
 * travels back.
 */
export function pooledClients(pool: pg.Pool, options: { deadlineMs?: number } = {}): pg.Pool {
  const names = new Map<string, string>();
  const nameOf = (text: string): string | undefined => {
    if (!STATEMENT.test(text)) return undefined;
    let name = names.get(text);
    if (!name && names.size < MAX_NAMED_STATEMENTS) {
      name = `s${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
      names.set(text, name);
    }
    return name;
  };
  const states = new WeakMap<pg.PoolClient, TransactionState>();

  /**
   * Sends `parts` as one flight; the named statements not yet prepared on this connection are
   * prepared first (once per connection), each by a round trip of its own queued ahead of the flight.
   */
  const fly = async (client: pg.PoolClient, parts: Part[]): Promise<Answer[]> => {
    const connection = (client as unknown as { connection: WireConnection }).connection;
    // Converted before anything is written: a value pg cannot send fails the query, not half a flight.
    const flight = new Flight(
      parts.map((part) => ({ ...part, values: part.values.map((value) => prepareValue(value)) })),
    );
    let prepareError: unknown;
    for (const part of parts) {
      if (part.name === undefined || isPrepared(connection, part.name)) continue;
      submit(client, new Prepare(part.text, part.name)).catch((error: unknown) => {
        prepareError ??= error;
      });
    }
    try {
      const answer = await submit<Answer | Answer[]>(client, flight);
      return Array.isArray(answer) ? answer : [answer];
    } catch (error) {
      // A statement that cannot be parsed fails its Prepare first, with the error worth reporting.
      throw prepareError ?? error;
    }
  };

  const query = async (client: pg.PoolClient, text: string, values: unknown[] | undefined) => {
    let state = states.get(client);
    if (!state) {
      state = { beginPending: false, committed: false };
      states.set(client, state);
    }
    const lowered = text.trim().toLowerCase();
    if (lowered === 'begin') {
      state.beginPending = true;
      state.committed = false;
      return answer('BEGIN');
    }
    if (lowered === 'commit' || lowered === 'rollback') {
      if (state.beginPending || state.committed) {
        state.beginPending = false;
        state.committed = false;
        return answer(lowered.toUpperCase());
      }
      return client.query(text);
    }
    if (state.committed) throw new Error('the transaction has committed; no statement may follow in it');
    if (text === COMMIT_FLIGHT) {
      const statements = (values ?? []) as FlightStatement[];
      const parts = statements.map((statement) => ({
        text: statement.sql,
        name: nameOf(statement.sql),
        values: [...statement.parameters],
      }));
      const begin = state.beginPending;
      state.beginPending = false;
      const answers = await fly(client, [...(begin ? [BEGIN] : []), ...parts, COMMIT]);
      state.committed = true;
      const own = answers.slice(begin ? 1 : 0, -1);
      return { command: 'COMMIT', rowCount: null, rows: own.map((a) => a.rows) };
    }
    const name = nameOf(text);
    if (state.beginPending) {
      state.beginPending = false;
      if (name === undefined && (values ?? []).length === 0) {
        // DDL or several commands in one text (a migration) need the simple protocol: BEGIN
        // alone, queued ahead of it.
        const [, answered] = await Promise.all([client.query('begin'), client.query(text)]);
        return answered;
      }
      const answers = await fly(client, [BEGIN, { text, name, values: values ?? [] }]);
      return answers[1];
    }
    if (name === undefined) return client.query(text, values);
    return client.query({ name, text, values }).catch((error: { code?: string }) => {
      if (error.code && STALE_STATEMENT.has(error.code)) return client.query(text, values);
      throw error;
    });
  };

  /**
   * A connection that has not answered by the deadline is taken for dead and its socket destroyed: a
   * partition or a vanished server leaves a pooled connection open with nothing coming back, and TCP
   * would take many minutes to say so. The statement fails as on a lost connection (503, to be sent
   * again), and the pool drops the client when it is given back. PostgreSQL's own statement_timeout,
   * set shorter than the deadline, ends slow statements on a live connection first.
   */
  const withDeadline = <T>(client: pg.PoolClient, pending: Promise<T>): Promise<T> => {
    const { deadlineMs } = options;
    if (!deadlineMs) return pending;
    const timer = setTimeout(() => {
      (client as unknown as { connection: WireConnection }).connection.stream.destroy();
    }, deadlineMs);
    return pending.finally(() => clearTimeout(timer));
  };

  const wrap = (client: pg.PoolClient): pg.PoolClient =>
    new Proxy(client, {
      get(target, property, receiver) {
        if (property === 'query') {
          return (text: unknown, values?: unknown[]) => {
            if (typeof text === 'string') return withDeadline(target, query(target, text, values));
            // A query object (a cursor) goes as it is; a BEGIN still owed goes ahead of it.
            const state = states.get(target);
            if (state?.beginPending) {
              state.beginPending = false;
              void target.query('begin').catch(() => undefined);
            }
            return (target.query as (t: unknown, v?: unknown[]) => unknown)(text, values);
          };
        }
        if (property === 'release') {
          return (error?: Error | boolean) => {
            states.delete(target);
            target.release(error);
          };
        }
        return Reflect.get(target, property, receiver) as unknown;
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

function answer(command: string): Answer {
  return { command, rowCount: null, rows: [] };
}
