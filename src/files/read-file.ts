import type { Actor } from '../core/access/actor.js';
import { canView, liveDocumentFiles } from '../core/access/document-access.js';
import type { Deps } from '../core/deps.js';
import { Forbidden, MfaRequired, NotFound } from '../base/errors.js';
import type { Recipient } from '../core/access/recipient-caller.js';
import { signedFilesOfShare } from '../core/sharing/share-standing.js';
import { canSeeTemplate } from '../core/access/template-access.js';
import type { FileRecord } from '../store/files/file-store.js';

/**
 * Whether the caller may read a file: their own upload; a document's main file, one of its
 * revisions or its barcode when they may see the document; an attachment when they may see the
 * document and hold `download_attachment` (spec Authentication 7); a template's file when they may
 * see the template (core/access/template-access.ts).
 * Anything else is "not found".
 */
export async function findReadableFile(deps: Deps, actor: Actor, id: string): Promise<FileRecord> {
  const file = await deps.files.find(actor.tenantId, id);
  if (!file) throw new NotFound('No such file');
  if (file.owner_id === actor.userId) return file;

  const documentIds = new Set<string>();
  const owning = await deps.db
    .selectFrom('documents')
    .select('id')
    .where('tenant_id', '=', actor.tenantId)
    .where((eb) => eb.or([eb('main_file_id', '=', id), eb('barcode_file_id', '=', id)]))
    .execute();
  for (const row of owning) documentIds.add(row.id);
  const revisions = await deps.db
    .selectFrom('document_revisions')
    .select('document_id')
    .where('file_id', '=', id)
    .execute();
  for (const row of revisions) documentIds.add(row.document_id);
  for (const documentId of documentIds) {
    const doc = await deps.db
      .selectFrom('documents')
      .selectAll()
      .where('id', '=', documentId)
      .executeTakeFirst();
    if (doc && (await canView(deps.db, actor, doc))) return file;
  }

  const attachedTo = await deps.db
    .selectFrom('document_attachments')
    .select('document_id')
    .where('file_id', '=', id)
    .execute();
  for (const { document_id } of attachedTo) {
    const doc = await deps.db
      .selectFrom('documents')
      .selectAll()
      .where('id', '=', document_id)
      .executeTakeFirst();
    if (doc && (await canView(deps.db, actor, doc))) {
      if (!actor.rights.has('download_attachment')) {
        throw new Forbidden('Downloading attachments needs the right download_attachment');
      }
      return file;
    }
  }

  const templates = await deps.db
    .selectFrom('templates')
    .selectAll()
    .where('file_id', '=', id)
    .where('tenant_id', '=', actor.tenantId)
    .execute();
  if (templates.some((template) => canSeeTemplate(actor, template))) return file;
  throw new NotFound('No such file');
}

/**
 * Whether an external recipient may read a file with their share-link token (Contract: "the share
 * token also reads that document's files through /files/loadFile/hash"): the shared document's main
 * file, its revisions and barcode, its public attachments, and what this share uploaded; once the
 * recipient acted, only the files they signed. The share must be unlocked; anything else is "not found".
 */
export async function findFileForRecipient(
  deps: Deps,
  recipient: Recipient,
  id: string,
): Promise<FileRecord> {
  if (!recipient.unlocked)
    throw new MfaRequired('This share is protected: unlock it with POST /share/unlock');
  const file = await deps.files.find(recipient.tenantId, id);
  if (!file) throw new NotFound('No such file');
  if (recipient.standing === 'completed') {
    // After acting, only what they signed (share-standing.ts): never a later round's file.
    if ((await signedFilesOfShare(deps.db, recipient.shareId)).includes(id)) return file;
    throw new NotFound('No such file');
  }
  if (file.share_id === recipient.shareId) return file;
  const doc = await liveDocumentFiles(deps.db, recipient.documentId);
  if (!doc) throw new NotFound('No such file');
  if (doc.main_file_id === id || doc.barcode_file_id === id) return file;
  const revision = await deps.db
    .selectFrom('document_revisions')
    .select('revision')
    .where('document_id', '=', recipient.documentId)
    .where('file_id', '=', id)
    .executeTakeFirst();
  if (revision) return file;
  const attachment = await deps.db
    .selectFrom('document_attachments')
    .select('file_id')
    .where('document_id', '=', recipient.documentId)
    .where('file_id', '=', id)
    .where('is_public', '=', 1)
    .executeTakeFirst();
  if (attachment) return file;
  throw new NotFound('No such file');
}
