import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatabaseHandle } from '../../src/store/db/dialect.js';
import { migrateToLatest } from '../../src/store/db/migrate.js';
import { openPostgres } from '../../src/store/db/postgres/postgres-database.js';
import type { Database } from '../../src/store/db/schema.js';
import { openSqlite } from '../../src/store/db/sqlite/sqlite-database.js';
import { dropSchema, TEST_DATABASE_URL } from '../helpers/server.js';

export interface TestDatabase {
  handle: DatabaseHandle<Database>;
  /** Another connection to the same database, as a second node would have. */
  openAnother(): Promise<DatabaseHandle<Database>>;
  close(): Promise<void>;
}

/** A migrated database of its own: a SQLite file in a temporary directory, or a PostgreSQL schema. */
export async function openTestDatabase(): Promise<TestDatabase> {
  const others: DatabaseHandle<Database>[] = [];
  if (TEST_DATABASE_URL) {
    const url = TEST_DATABASE_URL;
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const handle = await openPostgres({ url, schema });
    await migrateToLatest(handle);
    return {
      handle,
      async openAnother() {
        const other = await openPostgres({ url, schema });
        others.push(other);
        return other;
      },
      async close() {
        for (const other of others) await other.close();
        await handle.close();
        await dropSchema(schema, url);
      },
    };
  }
  const dir = await mkdtemp(join(tmpdir(), 'signery-jobs-'));
  const file = join(dir, 'signery.db');
  const handle = openSqlite({ file });
  await migrateToLatest(handle);
  return {
    handle,
    async openAnother() {
      const other = openSqlite({ file });
      others.push(other);
      return other;
    },
    async close() {
      for (const other of others) await other.close();
      await handle.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
