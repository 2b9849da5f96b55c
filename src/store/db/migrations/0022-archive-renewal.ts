import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { addColumns, createIndex } from './frozen/ddl.js';

/**
 * Documents sealed at B-LTA are renewed before their archive timestamp stops proving them (issue 23):
 * `archive_expires_at` says until when the newest one does, and the renewal schedule finds the due
 * documents by it.
 */
export function archiveRenewal(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await addColumns(db, d, 'documents', {
        archive_expires_at: 'timestamp',
      });
      await createIndex(db, 'documents_archive_expires', 'documents', ['archive_expires_at']);
    },
  };
}
