import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';

/**
 * Moves the sequence of every serial column of the schema (`audit_log.seq`) past the largest value
 * the column holds. Rows copied in with their own values (`signery migrate-store`) leave a sequence
 * where it was, and the next row the server writes would take a value already used.
 */
export async function advanceSerialSequences(db: Kysely<Database>): Promise<void> {
  const tables = await db.introspection.getTables();
  for (const table of tables) {
    for (const column of table.columns.filter((c) => c.isAutoIncrementing)) {
      await sql`select setval(pg_get_serial_sequence(${table.name}, ${column.name}), coalesce(max(${sql.ref(column.name)}), 0) + 1, false) from ${sql.table(table.name)}`.execute(
        db,
      );
    }
  }
}
