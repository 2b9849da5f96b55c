import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';

/**
 * Documents (folders are documents of kind `folder`, spec: Folder), their attachments and main-file
 * revisions, templates, drafts, definitions and workflows; file usage tracking for the usage rules.
 */
export function documents(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      // Files usage rules (spec Files): a file id is used once, except in drafts.
      await db.schema.alterTable('files').addColumn('used_by', 'text').execute();
      await db.schema.alterTable('files').addColumn('used_at', d.timestampType).execute();
      await db.schema.alterTable('files').addColumn('checksum', 'text').execute();
      await db.schema.alterTable('files').addColumn('pages', 'integer').execute();
      await db.schema.alterTable('files').addColumn('organization_id', 'text').execute();
      await db.schema.createIndex('files_organization').on('files').column('organization_id').execute();

      await db.schema
        .createTable('documents')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('owner_id', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('document_type', 'text', (c) => c.notNull())
        .addColumn('definition_type', 'text')
        .addColumn('workflow', 'text', (c) => c.notNull())
        .addColumn('share_state', 'text')
        .addColumn('main_file_id', 'text')
        .addColumn('barcode_file_id', 'text')
        .addColumn('custom_template', 'text')
        .addColumn('custom_fields', d.jsonType, (c) => c.notNull())
        .addColumn('folder_id', 'text')
        .addColumn('is_shared', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('is_signed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('data', d.jsonType, (c) => c.notNull())
        .addColumn('deleted_at', d.timestampType)
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .addColumn('updated_at', d.timestampType, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('documents_tenant_owner')
        .on('documents')
        .columns(['tenant_id', 'owner_id'])
        .execute();
      await db.schema.createIndex('documents_folder').on('documents').column('folder_id').execute();

      await db.schema
        .createTable('document_attachments')
        .addColumn('document_id', 'text', (c) => c.notNull())
        .addColumn('file_id', 'text', (c) => c.notNull())
        .addColumn('is_public', 'integer', (c) => c.notNull())
        .addColumn('submitted', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('added_by', 'text', (c) => c.notNull())
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .addPrimaryKeyConstraint('document_attachments_pk', ['document_id', 'file_id'])
        .execute();

      await db.schema
        .createTable('document_revisions')
        .addColumn('document_id', 'text', (c) => c.notNull())
        .addColumn('revision', 'integer', (c) => c.notNull())
        .addColumn('file_id', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('actor_id', 'text')
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .addPrimaryKeyConstraint('document_revisions_pk', ['document_id', 'revision'])
        .execute();

      await db.schema
        .createTable('templates')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('owner_id', 'text', (c) => c.notNull())
        .addColumn('file_id', 'text')
        .addColumn('data', d.jsonType, (c) => c.notNull())
        .addColumn('users', d.jsonType, (c) => c.notNull())
        .addColumn('groups', d.jsonType, (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .addColumn('updated_at', d.timestampType, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('drafts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('owner_id', 'text', (c) => c.notNull())
        .addColumn('data', d.jsonType, (c) => c.notNull())
        .addColumn('main_file_id', 'text')
        .addColumn('files', d.jsonType, (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .addColumn('updated_at', d.timestampType, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('definitions')
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('template_file_id', 'text')
        .addColumn('data', d.jsonType, (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .addColumn('updated_at', d.timestampType, (c) => c.notNull())
        .addPrimaryKeyConstraint('definitions_pk', ['tenant_id', 'name'])
        .execute();

      await db.schema
        .createTable('workflows')
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('data', d.jsonType, (c) => c.notNull())
        .addPrimaryKeyConstraint('workflows_pk', ['tenant_id', 'name'])
        .execute();
    },
  };
}
