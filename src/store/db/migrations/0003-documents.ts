import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { alterTables, createTables, TIMESTAMPS } from './frozen/ddl.js';

/**
 * Documents (folders are documents of kind `folder`, spec: Folder), their attachments and main-file
 * revisions, templates, drafts, definitions and workflows; file usage tracking for the usage rules.
 */
export function documents(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      // Files usage rules (spec Files): a file id is used once, except in drafts.
      await alterTables(db, d, {
        files: {
          columns: {
            used_by: 'text',
            used_at: 'timestamp',
            checksum: 'text',
            pages: 'integer',
            organization_id: 'text',
          },
          indexes: { files_organization: ['organization_id'] },
        },
      });

      await createTables(db, d, {
        documents: {
          columns: {
            id: 'text primary key',
            tenant_id: 'text not null',
            organization_id: 'text not null',
            kind: 'text not null',
            owner_id: 'text not null',
            created_by: 'text not null',
            title: 'text not null',
            document_type: 'text not null',
            definition_type: 'text',
            workflow: 'text not null',
            share_state: 'text',
            main_file_id: 'text',
            barcode_file_id: 'text',
            custom_template: 'text',
            custom_fields: 'json not null',
            folder_id: 'text',
            is_shared: 'integer not null default 0',
            is_signed: 'integer not null default 0',
            version: 'integer not null',
            data: 'json not null',
            deleted_at: 'timestamp',
            ...TIMESTAMPS,
          },
          indexes: {
            documents_tenant_owner: ['tenant_id', 'owner_id'],
            documents_folder: ['folder_id'],
          },
        },
        document_attachments: {
          columns: {
            document_id: 'text not null',
            file_id: 'text not null',
            is_public: 'integer not null',
            submitted: 'integer not null default 0',
            position: 'integer not null default 0',
            added_by: 'text not null',
            created_at: 'timestamp not null',
          },
          primaryKey: ['document_id', 'file_id'],
        },
        document_revisions: {
          columns: {
            document_id: 'text not null',
            revision: 'integer not null',
            file_id: 'text not null',
            reason: 'text not null',
            actor_id: 'text',
            created_at: 'timestamp not null',
          },
          primaryKey: ['document_id', 'revision'],
        },
        templates: {
          columns: {
            id: 'text primary key',
            tenant_id: 'text not null',
            organization_id: 'text not null',
            owner_id: 'text not null',
            file_id: 'text',
            data: 'json not null',
            users: 'json not null',
            groups: 'json not null',
            version: 'integer not null',
            ...TIMESTAMPS,
          },
        },
        drafts: {
          columns: {
            id: 'text primary key',
            tenant_id: 'text not null',
            owner_id: 'text not null',
            data: 'json not null',
            main_file_id: 'text',
            files: 'json not null',
            version: 'integer not null',
            ...TIMESTAMPS,
          },
        },
        definitions: {
          columns: {
            tenant_id: 'text not null',
            name: 'text not null',
            template_file_id: 'text',
            data: 'json not null',
            version: 'integer not null',
            ...TIMESTAMPS,
          },
          primaryKey: ['tenant_id', 'name'],
        },
        workflows: {
          columns: { tenant_id: 'text not null', name: 'text not null', data: 'json not null' },
          primaryKey: ['tenant_id', 'name'],
        },
      });
    },
  };
}
