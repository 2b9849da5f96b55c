import type { Deps } from '../core/deps.js';
import { Conflict, MfaRequired, NotFound } from '../base/errors.js';
import type { Recipient } from '../core/access/recipient-caller.js';
import { signedFilesOfShare } from '../core/sharing/share-standing.js';
import type { FileRecord } from '../store/files/file-store.js';

/**
 * GET /share/signed: what an external recipient signed, for RECIPIENT_DOWNLOAD_DAYS after they acted
 * (DESIGN: "their link (or their recipient session) may download the documents they signed … and
 * nothing else"). The file is the document's last one of their round (signatures after theirs and the
 * seal on completion included), never one of a later round. Before they acted there is nothing signed
 * to give: the document is read with GET /share/document.
 */
export async function signedCopyOf(deps: Deps, recipient: Recipient): Promise<FileRecord> {
  if (!recipient.unlocked)
    throw new MfaRequired('This share is protected: unlock it with POST /share/unlock');
  if (recipient.standing !== 'completed') {
    throw new Conflict('You have not acted on this share yet: GET /share/document shows the document');
  }
  const fileId = (await signedFilesOfShare(deps.db, recipient.shareId)).at(-1);
  const file = fileId ? await deps.files.find(recipient.tenantId, fileId) : undefined;
  if (!file) throw new NotFound('No such file');
  return file;
}
