import { writeTransaction } from '../../store/db/dialect.js';
import type { Readable } from 'node:stream';
import type { Actor } from '../../core/access/actor.js';
import { record } from '../../core/audit/record.js';
import type { Deps } from '../../core/deps.js';
import type { DocumentRow } from '../../core/access/document-access.js';
import { assertAttachmentLimits } from '../../core/documents/attachment-limits.js';
import { changeDocument } from '../../core/changes/change-document.js';
import type { DocumentView } from '../../core/views/document-view.js';
import { Conflict, FileNotUsable, NotFound, ValidationError } from '../../base/errors.js';
import { fileView, type FileView } from '../../core/views/file-view.js';
import { assertSignatureImage, assertUploadedImage } from '../../core/files/image-bytes.js';
import { reserveStorage, storeUploadBytes, type StorageUse } from '../../core/files/storage.js';
import { loadCallerShare } from '../../core/sharing/recipient.js';
import { callerName, callerRequestId, type RecipientCaller } from '../../core/access/recipient-caller.js';
import { assertShareCanAct } from '../../core/sharing/recipient-actions.js';
import { getSharedDocument } from '../get-shared-document.js';
import { getProperties } from '../../core/settings/tenant-settings.js';
import type { ShareRow } from '../../core/sharing/share-types.js';
import type { FileRecord } from '../../store/files/file-store.js';

/**
 * Upload kinds of the recipient endpoints (spec Files usage rules 2 and 3): what each file may later
 * be used for, by the share it was uploaded through only.
 */
export type ShareUploadKind =
  'share-signature' | 'share-initials' | 'share-stamp' | 'share-file' | 'share-submitted-file';

export interface IncomingFile {
  stream: Readable;
  name: string;
  mimetype: string;
}

/**
 * Reads a multipart request (the route's concern): hands the one file to `save` as a stream, with the
 * text fields sent before it, and answers every text field once the request is read.
 */
export type ReadUpload = <T>(
  save: (file: IncomingFile, fieldsSoFar: Record<string, string>) => Promise<T>,
) => Promise<{ result: T; fields: Record<string, string> }>;

export interface ShareUpload {
  share: ShareRow;
  doc: DocumentRow;
  record: FileRecord;
  file: FileView;
  storage: StorageUse;
}

/**
 * Receives a recipient's upload. Before a byte is stored: the share is found (an external recipient's
 * from the link; an internal user's by the `id` field, sent before the file), it must be unlocked
 * (403 MFA_REQUIRED, enforced by loadCallerShare) and still able to act (active, its turn, not
 * expired), and `check` may refuse on the fields sent so far. The bytes are streamed to storage
 * within the upload limit and the document organization's quota, owned by nobody and recorded with
 * the share (spec Files usage rule 2).
 */
export async function receiveShareUpload(
  deps: Deps,
  caller: RecipientCaller,
  read: ReadUpload,
  kind: ShareUploadKind,
  check?: (share: ShareRow, fieldsSoFar: Record<string, string>) => void,
): Promise<{ upload: ShareUpload; fields: Record<string, string> }> {
  const { result, fields } = await read(async (file, fieldsSoFar) => {
    let target: { share: ShareRow; doc: DocumentRow };
    try {
      target = await authorize(deps, caller, fieldsSoFar);
      check?.(target.share, fieldsSoFar);
    } catch (error) {
      file.stream.resume();
      throw error;
    }
    // An image for `images` (POST /share/upload/file without `attach`, sent before the file) must be one.
    const image = kind === 'share-file' && fieldsSoFar.attach !== 'true';
    return save(deps, caller, target, file, kind, image);
  });
  return { upload: result, fields };
}

async function authorize(
  deps: Deps,
  caller: RecipientCaller,
  fieldsSoFar: Record<string, string>,
): Promise<{ share: ShareRow; doc: DocumentRow }> {
  const documentId = caller.kind === 'external' ? caller.recipient.documentId : fieldsSoFar.id;
  if (!documentId) {
    throw new ValidationError('id', '(the document id) is required before "file" when acting with a session');
  }
  const share = await loadCallerShare(deps, caller, documentId);
  assertShareCanAct(share, deps.clock.now());
  const doc = await deps.db
    .selectFrom('documents')
    .selectAll()
    .where('id', '=', share.document_id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!doc) throw new NotFound('No such document');
  return { share, doc };
}

/**
 * Recipient uploads count against the storage of the document's organization; the limits are read
 * as that organization's, so this stands in for the uploader (like the recipient's document view).
 */
export function shareUploader(share: ShareRow, doc: DocumentRow, requestId: string): Actor {
  return {
    userId: `share:${share.id}`,
    name: share.share_to,
    tenantId: doc.tenant_id,
    tenantName: '',
    organizationId: doc.organization_id,
    role: 'read',
    rights: new Set(),
    tokenId: share.id,
    tokenKind: 'session',
    unlocked: true,
    requestId,
  };
}

async function save(
  deps: Deps,
  caller: RecipientCaller,
  target: { share: ShareRow; doc: DocumentRow },
  file: IncomingFile,
  kind: ShareUploadKind,
  image: boolean,
): Promise<ShareUpload> {
  const { share, doc } = target;
  const uploader = shareUploader(share, doc, callerRequestId(caller));
  const { stored, storage } = await storeUploadBytes(deps, uploader, file.stream);
  if (kind === 'share-signature' || kind === 'share-initials') await assertSignatureImage(deps, stored);
  else if (image) await assertUploadedImage(deps, stored);
  const now = deps.clock.now();
  // The row, the quota it takes and the audit entry commit together (spec Limits, Storage).
  const { saved, used } = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const use = await reserveStorage(trx, deps.dialect, uploader, stored.size, storage.limit);
    const saved = await deps.files.insert(
      trx,
      {
        tenantId: doc.tenant_id,
        organizationId: doc.organization_id,
        ownerId: null,
        shareId: share.id,
        name: file.name,
        mimetype: file.mimetype,
        kind,
      },
      stored,
      now,
    );
    await record(trx, {
      tenantId: doc.tenant_id,
      actorId: callerName(caller),
      activityType: 'fileUploaded',
      objectType: 'file',
      objectId: saved.id,
      requestId: callerRequestId(caller),
      data: { kind, size: saved.size, name: file.name, shareId: share.id, documentId: doc.id },
      at: now,
    });
    return { saved, used: use.used };
  });
  return {
    share,
    doc,
    record: saved,
    file: fileView(saved),
    storage: { used, limit: storage.limit },
  };
}

export interface ShareUploadAnswer {
  file: FileView;
  storage: StorageUse;
  /** Uploads added to the document: the document as the caller now sees it (like GET /share/document). */
  results?: DocumentView[];
}

/**
 * Adds a recipient's upload to the share's document: as a non-public attachment (`file` list), or as a
 * submitted file bound to its signature field (`submittedFiles`, spec Sharing rule 5). One
 * transaction: the compare-and-set on `_version` with its audit entry and `documentEdited` event
 * (changeDocument), the file claimed for the document, the attachment row. Two uploads racing for one
 * version: one wins, the other gets 409 VERSION_MISMATCH.
 */
export async function addUploadToDocument(
  deps: Deps,
  caller: RecipientCaller,
  upload: ShareUpload,
  options: { submittedField?: string; activityType: string },
): Promise<ShareUploadAnswer> {
  const { share } = upload;
  const now = deps.clock.now();
  const uploader = shareUploader(share, upload.doc, callerRequestId(caller));
  const properties = await getProperties(deps, uploader);
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const doc = await trx
      .selectFrom('documents')
      .selectAll()
      .where('id', '=', upload.doc.id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!doc) throw new NotFound('No such document');
    const attachments = await trx
      .selectFrom('document_attachments as a')
      .innerJoin('files as f', 'f.id', 'a.file_id')
      .select(['a.file_id', 'a.field_id', 'a.submitted', 'a.position', 'a.added_by', 'f.size'])
      .where('a.document_id', '=', doc.id)
      .execute();
    let replaced: { file_id: string; position: number } | undefined;
    if (options.submittedField !== undefined) {
      // spec Sharing rule 5: a field takes one file, and what is submitted stays. Until they act, a
      // recipient may replace their own submission (a wrong scan, the other side of an ID card);
      // the upload path refuses a share that has acted, so a signed submission never changes.
      const earlier = attachments.find((a) => a.submitted === 1 && a.field_id === options.submittedField);
      if (earlier && earlier.added_by !== `share:${share.id}`) {
        throw new Conflict(
          `A file was already submitted for the field "${options.submittedField}" by another recipient: it cannot be replaced`,
        );
      }
      if (earlier) {
        await trx
          .deleteFrom('document_attachments')
          .where('document_id', '=', doc.id)
          .where('file_id', '=', earlier.file_id)
          .execute();
        // The replaced upload is the recipient's again, unused: swept like any unused upload.
        await trx
          .updateTable('files')
          .set({ used_by: null, used_at: null })
          .where('id', '=', earlier.file_id)
          .execute();
        replaced = earlier;
      }
    } else {
      const listed = attachments.filter((a) => a.submitted === 0);
      assertAttachmentLimits(
        listed.length + 1,
        listed.reduce((sum, a) => sum + Number(a.size), 0) + Number(upload.record.size),
        properties.dropZoneMaxSize,
      );
    }
    await changeDocument(
      trx,
      { tenantId: doc.tenant_id, name: callerName(caller), requestId: callerRequestId(caller) },
      {
        doc,
        expectedVersion: doc.version,
        set: {},
        activityType: options.activityType,
        event: 'documentEdited',
        data: {
          fileId: upload.record.id,
          shareId: share.id,
          ...(options.submittedField !== undefined ? { fieldId: options.submittedField } : {}),
          ...(replaced ? { replaces: replaced.file_id } : {}),
        },
        now,
      },
    );
    const claimed = await trx
      .updateTable('files')
      .set({ used_by: `document:${doc.id}`, used_at: now.toISOString() })
      .where('id', '=', upload.record.id)
      .where('used_by', 'is', null)
      .executeTakeFirst();
    if (claimed.numUpdatedRows === 0n) throw new FileNotUsable('file: the file is already used');
    await trx
      .insertInto('document_attachments')
      .values({
        document_id: doc.id,
        file_id: upload.record.id,
        is_public: 0,
        submitted: options.submittedField !== undefined ? 1 : 0,
        // A replacement takes the place of what it replaces.
        position: replaced?.position ?? attachments.reduce((max, a) => Math.max(max, a.position), -1) + 1,
        added_by: `share:${share.id}`,
        created_at: now.toISOString(),
        field_id: options.submittedField ?? null,
      })
      .execute();
  });
  const view = await getSharedDocument(deps, caller, upload.doc.id);
  return { file: upload.file, storage: upload.storage, results: [view] };
}
