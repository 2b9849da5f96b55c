import type { Kysely } from 'kysely';
import type { Database } from '../../store/db/schema.js';

/** The view of one row, from the function that shapes many rows at once (with one lookup for all). */
export async function oneView<Row, View>(
  views: (db: Kysely<Database>, rows: Row[]) => Promise<View[]>,
  db: Kysely<Database>,
  row: Row,
): Promise<View> {
  const [view] = await views(db, [row]);
  if (!view) throw new Error('unreachable: one row in, one view out');
  return view;
}
