import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { addColumns, createIndex, createTable } from './frozen/ddl.js';

/**
 * Stamps as resources (spec Versioning 4: stamp resources and ID-based stamps) and what recipient
 * uploads need: the share a file was uploaded through (spec Files usage rule 2: an external
 * recipient's signature, initials and stamp come from /share/upload/*) and the signature field a
 * submitted file answers (spec Sharing rule 5: `annotation_submitted_file`, one file per field).
 */
export function stamps(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createTable(db, d, 'stamps', {
        id: 'text primary key',
        tenant_id: 'text not null',
        organization_id: 'text not null',
        owner_id: 'text',
        share_id: 'text',
        scope: 'text not null',
        name: 'text not null',
        file_id: 'text not null',
        created_at: 'timestamp not null',
        updated_at: 'timestamp not null',
        version: 'integer not null',
      }).execute();
      await createIndex(db, 'stamps_tenant_organization', 'stamps', [
        'tenant_id',
        'organization_id',
        'scope',
      ]);
      await createIndex(db, 'stamps_owner', 'stamps', ['tenant_id', 'owner_id']);
      await createIndex(db, 'stamps_share', 'stamps', ['share_id']);

      await addColumns(db, d, 'files', {
        share_id: 'text',
      });
      await createIndex(db, 'files_share', 'files', ['share_id']);

      await addColumns(db, d, 'document_attachments', {
        field_id: 'text',
      });
      // Submitted files are immutable: one per signature field of a document, also under races.
      await createIndex(
        db,
        'document_attachments_field',
        'document_attachments',
        ['document_id', 'field_id'],
        { unique: true },
      );
    },
  };
}
