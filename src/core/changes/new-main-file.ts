import type { Kysely } from 'kysely';
import type { Deps } from '../deps.js';
import type { DocumentRow } from '../access/document-access.js';
import { addRevision, changeDocument, type DocumentChanger } from './change-document.js';
import type { Database } from '../../store/db/schema.js';
import type { FileRecord, StoredBytes } from '../../store/files/file-store.js';
import type { EventName } from '../events/emit-event.js';
import type { ArchiveExpiry } from '../../pdf/archive-timestamp.js';
import { ValidationError } from '../../base/errors.js';

/**
 * Stores the bytes of a document's next main file inside the caller's transaction and runs `then` (the
 * rest of it) while the bytes are made durable: a new file id over the new bytes, used by the document,
 * with the page count of the file it follows (signing, sealing and annotating never add pages). Bytes
 * stored already (a large file sealed from the store, sealStoredFile) only get their row.
 */
export async function saveNextMainFile<T>(
  trx: Kysely<Database>,
  deps: Deps,
  options: { doc: DocumentRow; previous: FileRecord; bytes: Uint8Array | StoredBytes; now: Date },
  then: (saved: FileRecord) => Promise<T>,
): Promise<T> {
  const { doc, previous, now } = options;
  const file = {
    tenantId: doc.tenant_id,
    organizationId: doc.organization_id,
    ownerId: doc.owner_id,
    name: previous.name,
    mimetype: 'application/pdf',
    kind: 'signed',
    usedBy: `document:${doc.id}`,
    pages: previous.pages,
  };
  if (!(options.bytes instanceof Uint8Array))
    return then(await deps.files.insert(trx, file, options.bytes, now));
  const bytes = Buffer.from(options.bytes.buffer, options.bytes.byteOffset, options.bytes.byteLength);
  return deps.files.saveWith(trx, bytes, file, now, then);
}

/**
 * Makes a new main file current: compare-and-set on the version, audit record, event, and the file kept
 * as the next revision (the old one stays as the previous revision).
 */
export async function replaceMainFile(
  trx: Kysely<Database>,
  deps: Deps,
  options: {
    doc: DocumentRow;
    previous: FileRecord;
    bytes: Uint8Array | StoredBytes;
    by: DocumentChanger;
    expectedVersion: number;
    signed: boolean;
    activityType: string;
    event?: EventName | undefined;
    reason: string;
    data?: Record<string, unknown>;
    now: Date;
    /** False inside a call that already counted its change (see changeDocument). */
    bumpVersion?: boolean | undefined;
    /** A B-LTA signature's archive timestamp: the document is renewed before it stops proving. */
    archive?: ArchiveExpiry | undefined;
  },
): Promise<DocumentRow> {
  return saveNextMainFile(trx, deps, options, async (saved) => {
    const updated = await changeDocument(trx, options.by, {
      doc: options.doc,
      expectedVersion: options.expectedVersion,
      set: {
        main_file_id: saved.id,
        ...(options.signed ? { is_signed: 1 } : {}),
        ...(options.archive ? { archive_expires_at: options.archive.expiresAt.toISOString() } : {}),
      },
      activityType: options.activityType,
      event: options.event,
      data: { file: saved.id, ...options.data },
      now: options.now,
      bumpVersion: options.bumpVersion,
    });
    await addRevision(trx, {
      documentId: options.doc.id,
      fileId: saved.id,
      reason: options.reason,
      actor: options.by.name,
      now: options.now,
    });
    return updated;
  });
}

/** The bytes of a document's main file and its record. */
export async function mainFileBytes(
  deps: Deps,
  doc: DocumentRow,
): Promise<{ file: FileRecord; bytes: Uint8Array }> {
  const file = await mainFile(deps, doc);
  return { file, bytes: new Uint8Array(await deps.files.read(file)) };
}

/** The record of a document's main file, for a caller that reads the bytes its own way (sealStoredFile). */
export async function mainFile(deps: Deps, doc: DocumentRow): Promise<FileRecord> {
  if (!doc.main_file_id) throw new ValidationError('The document has no main file to sign');
  const file = await deps.files.find(doc.tenant_id, doc.main_file_id);
  if (!file) throw new ValidationError('The document’s main file is missing');
  return file;
}
