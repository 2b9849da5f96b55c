import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { sqliteDialect, type DatabaseHandle } from '../dialect.js';
import type { Database } from '../schema.js';
import { QueuedSqliteDialect } from './queued-sqlite-dialect.js';

/**
 * Opens the embedded SQLite database (the default store).
 *
 * ```ts
 * const handle = openSqlite({ file: join(dataDir, 'signery.db') });
 * ```
 */
export function openSqlite(options: { file: string }): DatabaseHandle<Database> {
  mkdirSync(dirname(options.file), { recursive: true });
  const connection = new BetterSqlite3(options.file);
  // WAL lets readers run beside the writer; FULL makes every commit durable on power loss (DESIGN).
  connection.pragma('journal_mode = WAL');
  connection.pragma('synchronous = FULL');
  connection.pragma('foreign_keys = ON');
  connection.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({
    dialect: new QueuedSqliteDialect({ database: cachingStatements(connection) }),
  });
  return sqliteHandle(db);
}

/**
 * The handle of an open SQLite database; `close` runs `beforeClose` first (a snapshot ends its
 * read transaction there).
 *
 * ```ts
 * return sqliteHandle(db, () => connection.exec('rollback'));
 * ```
 */
export function sqliteHandle(db: Kysely<Database>, beforeClose?: () => void): DatabaseHandle<Database> {
  return {
    db,
    dialect: sqliteDialect,
    schema: undefined,
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      beforeClose?.();
      await db.destroy();
    },
  };
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite driver prepares each statement on every execution; preparing is a quarter of the
 * CPU of a simple authenticated request (measured, bench/README.md). Statements are cached by their SQL
 * text instead. Safe because there is one connection and Kysely's driver serialises its use.
 */
function cachingStatements(
  connection: BetterSqlite3.Database,
): Pick<BetterSqlite3.Database, 'prepare' | 'close'> {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (!statement) {
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
        statement = connection.prepare(sql);
        cache.set(sql, statement);
      }
      return statement;
    },
    close() {
      cache.clear();
      return connection.close();
    },
  } as Pick<BetterSqlite3.Database, 'prepare' | 'close'>;
}
