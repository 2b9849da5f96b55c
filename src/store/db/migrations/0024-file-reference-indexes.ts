import type { Kysely, Migration } from 'kysely';
import { createIndex } from './frozen/ddl.js';

/**
 * The columns that name a document's files, indexed (issue 37: deletion deletes): a hard delete asks
 * which rows still name each of the document's files before removing its record, and a file read by
 * hash asks which documents name it. Without these, each question read the whole table.
 */
export function fileReferenceIndexes(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createIndex(db, 'documents_main_file', 'documents', ['main_file_id']);
      await createIndex(db, 'documents_barcode_file', 'documents', ['barcode_file_id']);
      await createIndex(db, 'document_attachments_file', 'document_attachments', ['file_id']);
      await createIndex(db, 'document_revisions_file', 'document_revisions', ['file_id']);
      await createIndex(db, 'files_used_by', 'files', ['used_by']);
    },
  };
}
