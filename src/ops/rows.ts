import { createHash } from 'node:crypto';
import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely';
import { canonicalJson } from '../core/audit/chain.js';
import { readJson } from '../store/db/json.js';
import type { Database, Json } from '../store/db/schema.js';
import { primaryKey, type TableName } from './tables.js';

/**
 * Rows of any table, as the operations that handle every table alike (migrate-store, restore) read
 * and write them: column names are checked against the schema at run time, not by the compiler.
 */
export type Row = Record<string, unknown>;
export type AnyDatabase = Record<string, Row>;
type AnyBuilder = ExpressionBuilder<AnyDatabase, string>;

/** `db` seen as a database of tables named at run time. */
export function untyped(db: Kysely<Database>): Kysely<AnyDatabase> {
  return db as unknown as Kysely<AnyDatabase>;
}

/** How a column's value is compared across SQLite and PostgreSQL (store/db/schema.ts conventions). */
export type ColumnKind = 'json' | 'timestamp' | 'number' | 'text';

/** Each column of a table and its kind. */
export type Columns = ReadonlyMap<string, ColumnKind>;

/**
 * The kind of a PostgreSQL column, from the type Kysely's introspection names (`jsonb`, `timestamp
 * with time zone`, `bigint`, `integer`, `text`…).
 */
export function columnKind(dataType: string): ColumnKind {
  if (dataType === 'jsonb' || dataType === 'json') return 'json';
  if (dataType.startsWith('timestamp')) return 'timestamp';
  if (/^(smallint|integer|bigint|numeric|real|double precision|int[248]|float[48])$/.test(dataType))
    return 'number';
  return 'text';
}

/**
 * A row's values as both dialects agree on them: JSON parsed (jsonb reorders keys and drops
 * whitespace; SQLite keeps the text), timestamps as ISO strings with milliseconds (timestamptz keeps
 * microseconds and reads back through Date), numbers as numbers (PostgreSQL's bigint arrives as text
 * to drivers without our parser).
 */
export function comparable(row: Row, columns: Columns): Row {
  const out: Row = {};
  for (const [name, kind] of columns) {
    const value = row[name];
    if (value === null || value === undefined) out[name] = null;
    else if (kind === 'json') out[name] = readJson<unknown>(value as Json, null);
    else if (kind === 'timestamp') out[name] = isoTimestamp(value);
    else if (kind === 'number') out[name] = Number(value);
    else out[name] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return out;
}

function isoTimestamp(value: unknown): string {
  const date = new Date(value as string);
  return Number.isNaN(date.getTime()) ? String(value) : date.toISOString();
}

/** SHA-256 of a row's comparable values: equal on both dialects exactly when the rows are. */
export function rowDigest(row: Row, columns: Columns): string {
  return createHash('sha256')
    .update(canonicalJson(comparable(row, columns)))
    .digest('hex');
}

/** A row's primary key as one text, to match rows of two databases. */
export function keyText(table: TableName, row: Row): string {
  return canonicalJson(primaryKey(table).map((column) => row[column]));
}

/**
 * Reads `table` in primary-key order, `batch` rows at a time: keyset pagination, so the last page
 * costs what the first does (an offset would read every row before it again).
 *
 * ```ts
 * for await (const rows of pages(db, 'documents', 500)) copy(rows);
 * ```
 */
export async function* pages(db: Kysely<Database>, table: TableName, batch: number): AsyncIterable<Row[]> {
  const key = primaryKey(table);
  let last: Row | undefined;
  for (;;) {
    let page = untyped(db).selectFrom(table).selectAll();
    if (last) {
      const after = last;
      page = page.where((eb) => keyAfter(eb, key, after));
    }
    for (const column of key) page = page.orderBy(column);
    const rows = await page.limit(batch).execute();
    if (rows.length === 0) return;
    yield rows;
    if (rows.length < batch) return;
    last = rows.at(-1);
  }
}

/** `key > last` for a primary key of one or more columns, in the order `pages` reads. */
function keyAfter(eb: AnyBuilder, key: readonly string[], last: Row): Expression<SqlBool> {
  const [first, ...rest] = key as [string, ...string[]];
  const greater = eb(first, '>', last[first]);
  if (rest.length === 0) return greater;
  return eb.or([greater, eb.and([eb(first, '=', last[first]), keyAfter(eb, rest, last)])]);
}

/** The rows of `table` whose primary keys are those of `rows`, by key text. */
export async function rowsWithKeysOf(
  db: Kysely<Database>,
  table: TableName,
  rows: readonly Row[],
): Promise<Map<string, Row>> {
  const found = new Map<string, Row>();
  if (rows.length === 0) return found;
  const matches = await untyped(db)
    .selectFrom(table)
    .selectAll()
    .where((eb) => keyIn(eb, primaryKey(table), rows))
    .execute();
  for (const row of matches) found.set(keyText(table, row), row);
  return found;
}

/** Deletes the rows of `table` whose primary keys are those of `rows`. */
export async function deleteRowsWithKeysOf(
  db: Kysely<Database>,
  table: TableName,
  rows: readonly Row[],
): Promise<void> {
  if (rows.length === 0) return;
  await untyped(db)
    .deleteFrom(table)
    .where((eb) => keyIn(eb, primaryKey(table), rows))
    .execute();
}

function keyIn(eb: AnyBuilder, key: readonly string[], rows: readonly Row[]): Expression<SqlBool> {
  if (key.length === 1) {
    const [column] = key as [string];
    return eb(
      column,
      'in',
      rows.map((row) => row[column]),
    );
  }
  return eb.or(rows.map((row) => eb.and(key.map((column) => eb(column, '=', row[column])))));
}

/** The number of rows of `table`. */
export async function countRows(db: Kysely<Database>, table: TableName): Promise<number> {
  const { n } = await untyped(db)
    .selectFrom(table)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(n);
}
