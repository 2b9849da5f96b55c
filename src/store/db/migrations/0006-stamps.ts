import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';

/**
 * Stamps as resources (spec Versioning 4: stamp resources and ID-based stamps) and what recipient
 * uploads need: the share a file was uploaded through (spec Files usage rule 2: an external
 * recipient's signature, initials and stamp come from /share/upload/*) and the signature field a
 * submitted file answers (spec Sharing rule 5: `annotation_submitted_file`, one file per field).
 */
export function stamps(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('stamps')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('owner_id', 'text')
        .addColumn('share_id', 'text')
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('file_id', 'text', (c) => c.notNull())
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .addColumn('updated_at', d.timestampType, (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('stamps_tenant_organization')
        .on('stamps')
        .columns(['tenant_id', 'organization_id', 'scope'])
        .execute();
      await db.schema.createIndex('stamps_owner').on('stamps').columns(['tenant_id', 'owner_id']).execute();
      await db.schema.createIndex('stamps_share').on('stamps').column('share_id').execute();

      await db.schema.alterTable('files').addColumn('share_id', 'text').execute();
      await db.schema.createIndex('files_share').on('files').column('share_id').execute();

      await db.schema.alterTable('document_attachments').addColumn('field_id', 'text').execute();
      // Submitted files are immutable: one per signature field of a document, also under races.
      await db.schema
        .createIndex('document_attachments_field')
        .on('document_attachments')
        .columns(['document_id', 'field_id'])
        .unique()
        .execute();
    },
  };
}
