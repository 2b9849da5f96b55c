import { sql, type Kysely } from 'kysely';
import type { Database } from '../../store/db/schema.js';

/** A file record that went, and the key of its bytes (which may still be another record's). */
export interface ReleasedFile {
  id: string;
  sha256: string;
}

/**
 * Every place a row names a file by id: a file is referenced while one of these holds it. JSON
 * columns are matched as text (file ids are random hex, so a match is the id).
 */
const ID_COLUMNS = [
  ['documents', 'main_file_id'],
  ['documents', 'barcode_file_id'],
  ['document_attachments', 'file_id'],
  ['document_revisions', 'file_id'],
  ['templates', 'file_id'],
  ['drafts', 'main_file_id'],
  ['definitions', 'template_file_id'],
  ['stamps', 'file_id'],
  ['signing_sessions', 'prepared_file_id'],
  ['users', 'photo'],
  ['contacts', 'photo'],
] as const;
const JSON_COLUMNS = [
  ['drafts', 'files'],
  ['enums', 'records'],
  ['users', 'config'],
] as const;

/**
 * Deletes the file records among `ids` that no row references any more, in the caller's transaction
 * (after it deleted the rows that used them): a record another document, template, draft, stamp or
 * user still names stays. Answers the records that went; their bytes are the blob store's to drop
 * once no record at all has them (FileStore.removeUnreferencedBytes, after commit).
 */
export async function releaseFiles(
  trx: Kysely<Database>,
  tenantId: string,
  ids: Iterable<string>,
): Promise<ReleasedFile[]> {
  const candidates = [...new Set(ids)];
  if (candidates.length === 0) return [];
  const kept = new Set<string>();
  for (const [table, column] of ID_COLUMNS) {
    const rows = await sql<{ id: string }>`select distinct ${sql.ref(column)} as id from ${sql.table(table)}
      where ${sql.ref(column)} in (${sql.join(candidates)})`.execute(trx);
    for (const row of rows.rows) kept.add(row.id);
  }
  for (const [table, column] of JSON_COLUMNS) {
    for (const id of candidates) {
      if (kept.has(id)) continue;
      const found = await sql<{ one: number }>`select 1 as one from ${sql.table(table)}
        where tenant_id = ${tenantId} and cast(${sql.ref(column)} as text) like ${`%${id}%`}
        limit 1`.execute(trx);
      if (found.rows.length > 0) kept.add(id);
    }
  }
  const gone = candidates.filter((id) => !kept.has(id));
  if (gone.length === 0) return [];
  return trx
    .deleteFrom('files')
    .where('id', 'in', gone)
    .where('tenant_id', '=', tenantId)
    .returning(['id', 'sha256'])
    .execute();
}
