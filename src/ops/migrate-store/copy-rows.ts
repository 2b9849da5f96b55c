import type { Kysely } from 'kysely';
import type { Database } from '../../store/db/schema.js';
import type { Counter } from '../progress.js';
import {
  deleteRowsWithKeysOf,
  keyText,
  pages,
  rowDigest,
  rowsWithKeysOf,
  untyped,
  type Columns,
  type Row,
} from '../rows.js';
import { primaryKey, type TableName } from '../tables.js';

/** One table of the source and of the target, with what is needed to compare their rows. */
export interface TablePair {
  source: Kysely<Database>;
  target: Kysely<Database>;
  table: TableName;
  columns: Columns;
  /** Rows read, compared and written at a time. */
  batch: number;
}

/** PostgreSQL takes at most 65,535 parameters in a statement; an insert of many rows stays well below. */
const MAX_PARAMETERS = 30_000;

/**
 * Copies the rows of a table that the target lacks or holds otherwise, a batch at a time in
 * primary-key order: each batch reads the target's rows with the same keys, compares their digests
 * and writes only what differs, in one statement (inserted, or updated where the key exists). A run
 * that was stopped starts again at the first batch and finds what it wrote there: resuming costs
 * reads, not writes, and never makes a second row.
 */
export async function copyTable(pair: TablePair, counter: Counter): Promise<{ written: number }> {
  const { source, target, table, columns, batch } = pair;
  let written = 0;
  for await (const rows of pages(source, table, batch)) {
    const existing = await rowsWithKeysOf(target, table, rows);
    const changed = rows.filter((row) => {
      const there = existing.get(keyText(table, row));
      return !there || rowDigest(there, columns) !== rowDigest(row, columns);
    });
    await upsert(target, table, columns, changed);
    written += changed.length;
    counter.add(rows.length);
  }
  return { written };
}

async function upsert(db: Kysely<Database>, table: TableName, columns: Columns, rows: Row[]): Promise<void> {
  const names = [...columns.keys()];
  const key = primaryKey(table);
  const others = names.filter((name) => !key.includes(name));
  const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS / names.length));
  for (let at = 0; at < rows.length; at += perStatement) {
    // The source's values as they are: JSON text becomes jsonb and ISO text timestamptz on the way in.
    const values = rows
      .slice(at, at + perStatement)
      .map((row) => Object.fromEntries(names.map((name) => [name, row[name] ?? null])));
    await untyped(db)
      .insertInto(table)
      .values(values)
      .onConflict((conflict) => {
        const on = conflict.columns(key);
        return others.length === 0
          ? on.doNothing()
          : on.doUpdateSet((eb) =>
              Object.fromEntries(others.map((name) => [name, eb.ref(`excluded.${name}`)])),
            );
      })
      .execute();
  }
}

/**
 * The target's rows of a table whose key the source does not have (`absent`), or has with other
 * values (`differing`), a page at a time in the target's key order.
 */
export async function* rowsOnlyInTarget(pair: TablePair): AsyncIterable<{ absent: Row[]; differing: Row[] }> {
  const { source, target, table, columns, batch } = pair;
  for await (const rows of pages(target, table, batch)) {
    const present = await rowsWithKeysOf(source, table, rows);
    const absent: Row[] = [];
    const differing: Row[] = [];
    for (const row of rows) {
      const there = present.get(keyText(table, row));
      if (!there) absent.push(row);
      else if (rowDigest(there, columns) !== rowDigest(row, columns)) differing.push(row);
    }
    yield { absent, differing };
  }
}

/**
 * Deletes from the target the rows of a table that the source no longer has: the source kept running
 * after an earlier run (sessions ended, jobs done, scroll contexts expired). Answers how many.
 */
export async function pruneTable(pair: TablePair): Promise<number> {
  let deleted = 0;
  for await (const { absent } of rowsOnlyInTarget(pair)) {
    await deleteRowsWithKeysOf(pair.target, pair.table, absent);
    deleted += absent.length;
  }
  return deleted;
}
