import type { Deps } from '../../core/deps.js';
import { Forbidden, ValidationError } from '../../base/errors.js';
import type { RecipientCaller } from '../../core/access/recipient-caller.js';
import { shareOptions, type ShareRow } from '../../core/sharing/share-types.js';
import {
  addUploadToDocument,
  receiveShareUpload,
  type ReadUpload,
  type ShareUploadAnswer,
} from './share-upload.js';

/** The recipient endpoints answering like POST /files/saveFile. */
export type ShareFileKind = 'share-signature' | 'share-initials' | 'share-file';

function attachRequested(fields: Record<string, string>): boolean {
  const value = fields.attach;
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new ValidationError('attach', 'must be true or false');
}

// spec Sharing rule 5 / Versioning 5: adding files to the document is the share right `uploadFiles`.
function assertMayAttach(share: ShareRow, kind: ShareFileKind): void {
  if (kind !== 'share-file') {
    throw new ValidationError('attach', 'is allowed on POST /share/upload/file only');
  }
  if (!shareOptions(share).rights.includes('uploadFiles'))
    throw new Forbidden('Adding files to the document needs the share right uploadFiles');
}

/**
 * POST /share/upload/signature, /share/upload/initials and /share/upload/file: a recipient's image,
 * usable by their share only (spec Files usage rules 2 and 3: signatures and initials any number of
 * times, `images` files once). With `attach=true` on /share/upload/file and the share right
 * `uploadFiles`, the file is added to the document's `file` list as a non-public attachment.
 */
export async function uploadShareFile(
  deps: Deps,
  caller: RecipientCaller,
  read: ReadUpload,
  kind: ShareFileKind,
): Promise<ShareUploadAnswer> {
  const { upload, fields } = await receiveShareUpload(deps, caller, read, kind, (share, fieldsSoFar) => {
    // Refused before the bytes are stored when the field comes first (as form clients send it).
    if (attachRequested(fieldsSoFar)) assertMayAttach(share, kind);
  });
  if (!attachRequested(fields)) return { file: upload.file, storage: upload.storage };
  assertMayAttach(upload.share, kind);
  return addUploadToDocument(deps, caller, upload, { activityType: 'documentAttachmentAdded' });
}
