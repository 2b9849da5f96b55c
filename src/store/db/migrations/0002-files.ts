import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';

/** Opaque file ids above the content-addressed blobs (DESIGN: Storage). */
export function files(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('files')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('mimetype', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('owner_id', 'text')
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('files_sha256').on('files').column('sha256').execute();
      await db.schema
        .createIndex('files_tenant_owner')
        .on('files')
        .columns(['tenant_id', 'owner_id'])
        .execute();
    },
  };
}
