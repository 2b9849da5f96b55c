import type { Kysely } from 'kysely';
import type { DocumentRow } from '../access/document-access.js';
import { releaseFiles, type ReleasedFile } from '../files/file-references.js';
import type { Database } from '../../store/db/schema.js';

/**
 * Removes a document for good (DESIGN: hard delete "removes the document's rows, revisions,
 * attachments and file records at once"), in the caller's transaction: the document, its attachments
 * and revisions, its shares with every credential and upload derived from them (links, recipient
 * sessions, sign-ins under way, recipients' stamps and files), its two-step signing sessions, and the
 * file records only it used. A file another document, template, draft or user still names stays.
 * Answers the file records that went; their bytes go after commit once no record has them
 * (FileStore.removeUnreferencedBytes). Audit records and events keep their ids: the audit chain
 * covers them.
 */
export async function eraseDocument(trx: Kysely<Database>, doc: DocumentRow): Promise<ReleasedFile[]> {
  const shares = trx.selectFrom('shares').select('id').where('document_id', '=', doc.id);
  const fileIds = new Set<string>();
  for (const id of [doc.main_file_id, doc.barcode_file_id]) if (id !== null) fileIds.add(id);
  const owned = await trx
    .selectFrom('document_attachments')
    .select('file_id as id')
    .where('document_id', '=', doc.id)
    .union(trx.selectFrom('document_revisions').select('file_id as id').where('document_id', '=', doc.id))
    .union(
      trx.selectFrom('signing_sessions').select('prepared_file_id as id').where('document_id', '=', doc.id),
    )
    // Every file it used (`document:<id>`: images drawn on it, earlier main files) and what its
    // recipients uploaded (their signatures, initials, files, stamps' images).
    .union(trx.selectFrom('files').select('id').where('used_by', '=', `document:${doc.id}`))
    .union(trx.selectFrom('files').select('id').where('share_id', 'in', shares))
    .union(trx.selectFrom('stamps').select('file_id as id').where('share_id', 'in', shares))
    .execute();
  for (const { id } of owned) fileIds.add(id);

  await trx.deleteFrom('share_links').where('share_id', 'in', shares).execute();
  await trx.deleteFrom('recipient_sessions').where('share_id', 'in', shares).execute();
  await trx.deleteFrom('share_oidc_states').where('share_id', 'in', shares).execute();
  await trx.deleteFrom('stamps').where('share_id', 'in', shares).execute();
  await trx.deleteFrom('shares').where('document_id', '=', doc.id).execute();
  await trx.deleteFrom('signing_sessions').where('document_id', '=', doc.id).execute();
  await trx.deleteFrom('document_attachments').where('document_id', '=', doc.id).execute();
  await trx.deleteFrom('document_revisions').where('document_id', '=', doc.id).execute();
  await trx.deleteFrom('documents').where('id', '=', doc.id).execute();
  return releaseFiles(trx, doc.tenant_id, fileIds);
}
