import type { Readable } from 'node:stream';
import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { Forbidden } from '../base/errors.js';
import { PdfTooLarge } from '../pdf/errors.js';
import { inspectPdf, type PdfInspection } from '../pdf/inspect-pdf.js';
import { repairPdf } from '../pdf/repair-pdf.js';
import { assertUploadedImage, assertSignatureImage } from '../core/files/image-bytes.js';
import type { FileRecord, FileRepair, StoredBytes } from '../store/files/file-store.js';
import { readUserConfig, writeUserConfig } from '../core/settings/user-config.js';
import { fileView, type FileView } from '../core/views/file-view.js';
import { reserveStorage, storeUploadBytes, type StorageUse } from '../core/files/storage.js';
import { writeTransaction } from '../store/db/dialect.js';

/**
 * Upload endpoints, and what each file may later be used for (spec Files, usage rules 1 and 2):
 * `saveFile` documents, attachments, images, stamps; `photo` photos of users, contacts and enums;
 * `signature`/`initials` a user's own signing images.
 */
export type UploadKind = 'saveFile' | 'photo' | 'signature' | 'initials';

export interface UploadOptions {
  stream: Readable;
  name: string;
  mimetype: string;
  kind: UploadKind;
}

export interface Uploaded {
  file: FileView;
  storage: StorageUse;
  record: FileRecord;
}

// Page counts and repairs need the whole PDF in memory; above this size they are left for when the file is
// used (a damaged one is then refused, naming the damage).
const PAGE_COUNT_MAX_BYTES = 32 * 1024 * 1024;

/**
 * POST /files/saveFile, /files/photo, /files/signature, /files/initials: streams the bytes to the blob
 * store (never whole in memory) within the upload limit and the organization's storage quota.
 */
export async function uploadFile(deps: Deps, actor: Actor, options: UploadOptions): Promise<Uploaded> {
  if (options.kind === 'saveFile' && !actor.rights.has('use_file_management')) {
    throw new Forbidden('Uploading files needs the right use_file_management');
  }
  const uploaded = await storeUploadBytes(deps, actor, options.stream);
  const { storage } = uploaded;
  if (options.kind === 'signature' || options.kind === 'initials') {
    await assertSignatureImage(deps, uploaded.stored);
  } else if (options.kind === 'photo') await assertUploadedImage(deps, uploaded.stored);
  const { stored, pages, repair } = await readPdf(deps, uploaded.stored, options);
  const now = deps.clock.now();
  // spec Limits, Storage; a crash leaves no file without its audit entry: the row, the quota it takes,
  // the uploader's images list and the audit entry commit together.
  const { record: saved, used } = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const use = await reserveStorage(trx, deps.dialect, actor, stored.size, storage.limit);
    const file = await deps.files.insert(
      trx,
      {
        tenantId: actor.tenantId,
        organizationId: actor.organizationId,
        ownerId: actor.userId,
        name: options.name,
        mimetype: options.mimetype,
        kind: options.kind,
        pages,
        ...(repair ? { repair } : {}),
      },
      stored,
      now,
    );
    if (options.kind === 'signature' || options.kind === 'initials') {
      // Contract: a signature or initials image belongs to its uploader and is listed in user.config.
      const config = await readUserConfig(trx, actor.userId);
      const list = Array.isArray(config[options.kind]) ? (config[options.kind] as unknown[]) : [];
      config[options.kind] = [...list, { imageId: file.id, name: options.name }];
      await writeUserConfig(trx, actor.userId, config);
    }
    await recordAction(trx, actor, {
      activityType: 'fileUploaded',
      objectType: 'file',
      objectId: file.id,
      data: { kind: options.kind, size: file.size, name: options.name, ...(repair ? { repair } : {}) },
      at: now,
    });
    return { record: file, used: use.used };
  });
  return { file: fileView(saved), storage: { used, limit: storage.limit }, record: saved };
}

/**
 * What a PDF upload becomes: its page count for the row (null when the PDF is large, not readable, or
 * over the parsing limits: every use that reads it as a PDF then answers 4xx naming the problem,
 * pdf/pdf-limits.ts), and for a `saveFile` upload whose cross-reference table is damaged and that
 * carries no signature, the repaired copy (issue 23): its bytes are stored as the file, and `repair`
 * says so. The bytes as uploaded stay unreferenced, for the sweep.
 */
async function readPdf(
  deps: Deps,
  stored: StoredBytes,
  file: Pick<UploadOptions, 'mimetype' | 'name' | 'kind'>,
): Promise<{ stored: StoredBytes; pages: number | null; repair?: FileRepair }> {
  if (!isPdf(file) || stored.size > PAGE_COUNT_MAX_BYTES) return { stored, pages: null };
  const bytes = await deps.files.readBytes(stored);
  const inspection = await inspected(bytes);
  if (inspection.ok || file.kind !== 'saveFile')
    return { stored, pages: inspection.ok ? inspection.pages : null };
  const repaired = await repairPdf(bytes);
  if (!repaired) return { stored, pages: null };
  const after = await inspected(repaired.bytes);
  return {
    stored: await deps.files.storeBytes(Buffer.from(repaired.bytes)),
    pages: after.ok ? after.pages : null,
    repair: { problem: repaired.problem, originalSize: stored.size, originalChecksum: stored.checksum },
  };
}

/** `inspectPdf`, with a file over the parsing limits as one more problem (it is stored all the same). */
function inspected(bytes: Uint8Array): Promise<PdfInspection> {
  return inspectPdf(bytes).catch((error: unknown) => {
    if (error instanceof PdfTooLarge) return { ok: false as const, problem: error.message };
    throw error;
  });
}

export function isPdf(file: Pick<FileRecord, 'mimetype' | 'name'>): boolean {
  return file.mimetype === 'application/pdf' || file.name.toLowerCase().endsWith('.pdf');
}
