import type { Kysely } from 'kysely';
import type { SqlDialect } from '../../store/db/dialect.js';
import type { Database } from '../../store/db/schema.js';
import { untyped } from '../rows.js';

/**
 * The row `signery migrate-store` keeps in the target's schema: which installation it copies, when
 * the latest run began and when the copy was last verified. It is what tells a target this command
 * filled (a run may resume there) from one that holds data of its own (refused). Not part of the
 * application's schema: nothing else reads it, and it can be dropped once the nodes run there.
 */
export interface MigrationRecord {
  /** The source's SQLite file (its real path). */
  source: string;
  started_at: string;
  verified_at: string | null;
}

export const MIGRATION_RECORD_TABLE = 'signery_store_migration';

export async function readMigrationRecord(db: Kysely<Database>): Promise<MigrationRecord | undefined> {
  const tables = await db.introspection.getTables();
  if (!tables.some((t) => t.name === MIGRATION_RECORD_TABLE)) return undefined;
  const row = await untyped(db).selectFrom(MIGRATION_RECORD_TABLE).selectAll().executeTakeFirst();
  return row as MigrationRecord | undefined;
}

/** Records that a run from `source` begins (the first one creates the table). */
export async function recordMigrationStart(
  db: Kysely<Database>,
  dialect: SqlDialect,
  source: string,
  now: Date,
): Promise<void> {
  await untyped(db)
    .schema.createTable(MIGRATION_RECORD_TABLE)
    .ifNotExists()
    .addColumn('source', 'text', (c) => c.primaryKey())
    .addColumn('started_at', dialect.timestampType, (c) => c.notNull())
    .addColumn('verified_at', dialect.timestampType)
    .execute();
  await untyped(db)
    .insertInto(MIGRATION_RECORD_TABLE)
    .values({ source, started_at: now.toISOString(), verified_at: null })
    .onConflict((conflict) => conflict.column('source').doUpdateSet({ started_at: now.toISOString() }))
    .execute();
}

export async function recordMigrationVerified(
  db: Kysely<Database>,
  source: string,
  now: Date,
): Promise<void> {
  await untyped(db)
    .updateTable(MIGRATION_RECORD_TABLE)
    .set({ verified_at: now.toISOString() })
    .where('source', '=', source)
    .execute();
}
