import type { Kysely } from 'kysely';
import type { Database } from '../store/db/schema.js';
import { countRows } from './rows.js';
import { TABLE_ORDER, type TableName } from './tables.js';

/** A blob the files of a database reference: its key (the SHA-256 of its bytes) and its size. */
export interface BlobRef {
  sha256: string;
  size: number;
}

/**
 * The blobs the `files` rows reference, each once, in key order, `batch` at a time (keyset pages over
 * the `files_sha256` index). Identical uploads share one blob (DESIGN: Storage), and the rows are
 * what says which blobs an installation needs: blobs no row references are leftovers of interrupted
 * uploads.
 */
export async function* referencedBlobs(db: Kysely<Database>, batch: number): AsyncIterable<BlobRef[]> {
  let last = '';
  for (;;) {
    const rows = await db
      .selectFrom('files')
      .select((eb) => ['sha256', eb.fn.max('size').as('size')])
      .where('sha256', '>', last)
      .groupBy('sha256')
      .orderBy('sha256')
      .limit(batch)
      .execute();
    if (rows.length === 0) return;
    yield rows.map((row) => ({ sha256: row.sha256, size: Number(row.size) }));
    if (rows.length < batch) return;
    last = rows.at(-1)!.sha256;
  }
}

/** How many blobs the `files` rows reference, and their bytes. */
export async function countReferencedBlobs(db: Kysely<Database>): Promise<{ blobs: number; bytes: number }> {
  const { blobs, bytes } = await db
    .selectFrom((sub) =>
      sub
        .selectFrom('files')
        .select((eb) => ['sha256', eb.fn.max('size').as('size')])
        .groupBy('sha256')
        .as('referenced'),
    )
    .select((eb) => [eb.fn.countAll().as('blobs'), eb.fn.sum('size').as('bytes')])
    .executeTakeFirstOrThrow();
  return { blobs: Number(blobs), bytes: Number(bytes ?? 0) };
}

/** The rows of every table (TABLES), by table. */
export async function countAllRows(db: Kysely<Database>): Promise<Record<TableName, number>> {
  const counts = {} as Record<TableName, number>;
  for (const table of TABLE_ORDER) counts[table] = await countRows(db, table);
  return counts;
}
