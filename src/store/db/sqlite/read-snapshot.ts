import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { DatabaseHandle } from '../dialect.js';
import type { Database } from '../schema.js';
import { sqliteHandle } from './sqlite-database.js';

/**
 * Opens the SQLite file of a possibly running installation for reading as it is at this moment:
 * every query sees the database as it was when this returned, whatever the server writes meanwhile.
 * In WAL mode (openSqlite sets it on every installation's file) a read transaction keeps its
 * snapshot and the writers go on; the WAL grows until `close` (it cannot be checkpointed past a
 * reader), so hold it for one operation only. For `signery migrate-store`, which copies a running
 * installation, and for reading a backup's copy.
 *
 * ```ts
 * const source = openSqliteSnapshot(join(dataDir, 'signery.db'));
 * try { … await source.db.selectFrom('documents')… } finally { await source.close(); }
 * ```
 */
export function openSqliteSnapshot(file: string): DatabaseHandle<Database> {
  // Read-only: nothing done through this handle can change the installation.
  const connection = new BetterSqlite3(file, { fileMustExist: true, readonly: true });
  connection.pragma('busy_timeout = 5000');
  connection.exec('begin');
  // SQLite takes the snapshot at the transaction's first read, not at BEGIN.
  connection.prepare('select count(*) from sqlite_schema').get();
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
  return sqliteHandle(db, () => {
    if (connection.inTransaction) connection.exec('rollback');
  });
}
