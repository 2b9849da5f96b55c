import { join } from 'node:path';
import type { Config } from '../../base/config.js';
import type { DatabaseHandle } from './dialect.js';
import type { Database } from './schema.js';
import { openPostgres } from './postgres/postgres-database.js';
import { openSqlite } from './sqlite/sqlite-database.js';

/** PostgreSQL when DATABASE_URL is set, otherwise the embedded SQLite file under DATA_DIR. */
export async function openDatabase(config: Config): Promise<DatabaseHandle<Database>> {
  if (config.databaseUrl) {
    return openPostgres({
      url: config.databaseUrl,
      schema: config.databaseSchema,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
    });
  }
  return openSqlite({ file: join(config.dataDir, 'signery.db') });
}
