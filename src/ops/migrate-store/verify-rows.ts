import { countRows, keyText, pages, rowDigest, rowsWithKeysOf } from '../rows.js';
import type { Counter } from '../progress.js';
import type { TablePair } from './copy-rows.js';

export interface TableVerification {
  sourceRows: number;
  targetRows: number;
  /** Source rows the target lacks. */
  missing: number;
  /** Source rows the target holds with other values. */
  differing: number;
  /** A few of the keys concerned, for the message. */
  examples: string[];
}

/**
 * Compares a table of the target with the source row by row: both counts, then each source row with
 * the target's row of the same key, by digest (values as both dialects agree on them). Equal counts
 * and no source row missing mean the target has no row more either: keys are unique.
 */
export async function verifyTable(pair: TablePair, counter: Counter): Promise<TableVerification> {
  const { source, target, table, columns, batch } = pair;
  const result: TableVerification = {
    sourceRows: await countRows(source, table),
    targetRows: await countRows(target, table),
    missing: 0,
    differing: 0,
    examples: [],
  };
  for await (const rows of pages(source, table, batch)) {
    const there = await rowsWithKeysOf(target, table, rows);
    for (const row of rows) {
      const key = keyText(table, row);
      const copy = there.get(key);
      if (copy && rowDigest(copy, columns) === rowDigest(row, columns)) continue;
      if (copy) result.differing++;
      else result.missing++;
      if (result.examples.length < 3) result.examples.push(`${copy ? 'differs' : 'missing'}: ${key}`);
    }
    counter.add(rows.length);
  }
  return result;
}

/** Whether the table's copy is exact. */
export function isExact(verification: TableVerification): boolean {
  return (
    verification.missing === 0 &&
    verification.differing === 0 &&
    verification.sourceRows === verification.targetRows
  );
}
