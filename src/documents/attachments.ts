import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { Forbidden, NotFound } from '../base/errors.js';
import { readJson } from '../store/db/json.js';
import type { FileRecord } from '../store/files/file-store.js';
import { loadVisible } from '../core/access/document-access.js';

function assertMayView(actor: Actor): void {
  // spec Authentication 7 and Endpoints: attachment downloads need `view_attachments`.
  if (!actor.rights.has('view_attachments'))
    throw new Forbidden('Attachments need the right view_attachments');
}

/** The attachments of a document the caller may see (GET /attachments/{id}/zip, /attachments/{id}/{hash}). */
export async function listAttachments(deps: Deps, actor: Actor, documentId: string): Promise<FileRecord[]> {
  assertMayView(actor);
  const doc = await loadVisible(deps.db, actor, documentId);
  return deps.db
    .selectFrom('document_attachments as a')
    .innerJoin('files as f', 'f.id', 'a.file_id')
    .selectAll('f')
    .where('a.document_id', '=', doc.id)
    .orderBy('a.position')
    .execute();
}

export async function findAttachment(
  deps: Deps,
  actor: Actor,
  documentId: string,
  fileId: string,
): Promise<FileRecord> {
  const file = (await listAttachments(deps, actor, documentId)).find((f) => f.id === fileId);
  if (!file) throw new NotFound('No such attachment');
  return file;
}

/** GET /attachments/draft/{id}/{hash}: a file of one of the caller's drafts. */
export async function findDraftAttachment(
  deps: Deps,
  actor: Actor,
  draftId: string,
  fileId: string,
): Promise<FileRecord> {
  assertMayView(actor);
  const draft = await deps.db
    .selectFrom('drafts')
    .select(['files', 'main_file_id'])
    .where('id', '=', draftId)
    .where('tenant_id', '=', actor.tenantId)
    .where('owner_id', '=', actor.userId)
    .executeTakeFirst();
  const ids = draft ? [...readJson<string[]>(draft.files, []), draft.main_file_id] : [];
  const file = ids.includes(fileId) ? await deps.files.find(actor.tenantId, fileId) : undefined;
  if (!file) throw new NotFound('No such attachment');
  return file;
}
