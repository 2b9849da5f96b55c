import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { alterTables, createTables, TIMESTAMPS } from './frozen/ddl.js';

/**
 * Stamps as resources (spec Versioning 4: stamp resources and ID-based stamps) and what recipient
 * uploads need: the share a file was uploaded through (spec Files usage rule 2: an external
 * recipient's signature, initials and stamp come from /share/upload/*) and the signature field a
 * submitted file answers (spec Sharing rule 5: `annotation_submitted_file`, one file per field).
 */
export function stamps(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createTables(db, d, {
        stamps: {
          columns: {
            id: 'text primary key',
            tenant_id: 'text not null',
            organization_id: 'text not null',
            owner_id: 'text',
            share_id: 'text',
            scope: 'text not null',
            name: 'text not null',
            file_id: 'text not null',
            ...TIMESTAMPS,
            version: 'integer not null',
          },
          indexes: {
            stamps_tenant_organization: ['tenant_id', 'organization_id', 'scope'],
            stamps_owner: ['tenant_id', 'owner_id'],
            stamps_share: ['share_id'],
          },
        },
      });

      await alterTables(db, d, {
        files: { columns: { share_id: 'text' }, indexes: { files_share: ['share_id'] } },
        document_attachments: {
          columns: { field_id: 'text' },
          // Submitted files are immutable: one per signature field of a document, also under races.
          uniqueIndexes: { document_attachments_field: ['document_id', 'field_id'] },
        },
      });
    },
  };
}
