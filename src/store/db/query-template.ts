import type { Compilable, CompiledQuery, Kysely } from 'kysely';
import { dialectOf, type SqlDialect } from './dialect.js';
import type { Database } from './schema.js';

/** Stands where a value goes while a template is compiled. */
class Slot {
  constructor(readonly name: string) {
    Object.freeze(this);
  }
}

/** For each compiled parameter: the slot whose value goes there, or a constant of the query itself. */
type Binding<P> = { slot: keyof P } | { constant: unknown };

interface Compiled<P, R> {
  query: CompiledQuery<R>;
  bindings: readonly Binding<P>[];
}

/**
 * A query built and compiled once per dialect, with named slots where its values go, then run with
 * values. Building and compiling a Kysely query costs more CPU than SQLite takes to run a simple one
 * (bench/README.md: API throughput), and on PostgreSQL one text is one prepared statement.
 *
 * `build` runs once per dialect, so it must take every value that varies from `slots` (each slot is
 * an opaque stand-in typed as its value); anything else it passes Kysely is a constant of the query.
 * A value Kysely expands (an array given to `in`) cannot be a slot: use `dialect.isInTextList`.
 *
 * ```ts
 * const userById = new QueryTemplate((db, p: { id: string }) =>
 *   db.selectFrom('users').select('name').where('id', '=', p.id),
 * );
 * const rows = await userById.execute(db, { id });
 * ```
 */
export class QueryTemplate<P extends object, R> {
  readonly #build: (db: Kysely<Database>, slots: P, dialect: SqlDialect) => Compilable<R>;
  readonly #compiled = new Map<SqlDialect['name'], Compiled<P, R>>();

  constructor(build: (db: Kysely<Database>, slots: P, dialect: SqlDialect) => Compilable<R>) {
    this.#build = build;
  }

  /** The query with `values` in its slots, to run with `db` (or any transaction of its dialect). */
  compile(db: Kysely<Database>, values: P): CompiledQuery<R> {
    const { query, bindings } = this.#compiledFor(db);
    const parameters = bindings.map((binding) =>
      'slot' in binding ? (values[binding.slot] as unknown) : binding.constant,
    );
    return { ...query, parameters };
  }

  async execute(db: Kysely<Database>, values: P): Promise<R[]> {
    return (await db.executeQuery(this.compile(db, values))).rows;
  }

  #compiledFor(db: Kysely<Database>): Compiled<P, R> {
    const dialect = dialectOf(db);
    let compiled = this.#compiled.get(dialect.name);
    if (!compiled) {
      const slots = new Proxy({}, { get: (_, name) => new Slot(String(name)) }) as P;
      const query = this.#build(db, slots, dialect).compile();
      const bindings = query.parameters.map((parameter): Binding<P> =>
        parameter instanceof Slot ? { slot: parameter.name as keyof P } : { constant: parameter },
      );
      compiled = { query, bindings };
      this.#compiled.set(dialect.name, compiled);
    }
    return compiled;
  }
}
