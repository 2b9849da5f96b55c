import type { Readable } from 'node:stream';
import type { Actor } from '../auth/actor.js';
import { record } from '../audit/record.js';
import type { Deps } from '../deps.js';
import { Forbidden, LimitExceeded } from '../errors.js';
import { PdfTooLarge } from '../pdf/errors.js';
import { inspectPdf } from '../pdf/inspect-pdf.js';
import { BlobTooLarge } from '../store/blobs/blob-store.js';
import type { FileRecord } from '../store/files/file-store.js';
import { readJson, writeJson } from '../store/db/json.js';
import { fileView, type FileView } from './file-view.js';
import { uploadAllowance, type StorageUse } from './storage.js';
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

// Page counts need the whole PDF in memory; above this size they are left for when the file is used.
const PAGE_COUNT_MAX_BYTES = 32 * 1024 * 1024;

/**
 * POST /files/saveFile, /files/photo, /files/signature, /files/initials: streams the bytes to the blob
 * store (never whole in memory) within the upload limit and the organization's storage quota.
 */
export async function uploadFile(deps: Deps, actor: Actor, options: UploadOptions): Promise<Uploaded> {
  if (options.kind === 'saveFile' && !actor.rights.has('use_file_management')) {
    throw new Forbidden('Uploading files needs the right use_file_management');
  }
  const { limit, storage } = await uploadAllowance(deps, actor);
  const remaining = Math.max(0, storage.limit - storage.used);
  const maxBytes = Math.min(limit, remaining);
  let saved: FileRecord;
  try {
    saved = await deps.files.save(
      options.stream,
      {
        tenantId: actor.tenantId,
        organizationId: actor.organizationId,
        ownerId: actor.userId,
        name: options.name,
        mimetype: options.mimetype,
        kind: options.kind,
        maxBytes,
      },
      deps.clock.now(),
    );
  } catch (error) {
    if (!(error instanceof BlobTooLarge)) throw error;
    options.stream.resume();
    throw limit <= remaining
      ? new LimitExceeded(`The file is larger than the upload limit of ${limit / 1024 / 1024} MB`)
      : new LimitExceeded(`The organization's storage quota is used up (${storage.limit} bytes)`);
  }
  if (isPdf(saved) && saved.size <= PAGE_COUNT_MAX_BYTES) {
    // A PDF over the parsing limits is kept as bytes, without a page count: every use that reads it
    // answers 413 (pdf/pdf-limits.ts).
    const inspection = await inspectPdf(await deps.files.read(saved)).catch((error: unknown) => {
      if (error instanceof PdfTooLarge) return { ok: false as const, problem: error.message };
      throw error;
    });
    if (inspection.ok) {
      saved.pages = inspection.pages;
      await deps.db
        .updateTable('files')
        .set({ pages: inspection.pages })
        .where('id', '=', saved.id)
        .execute();
    }
  }
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    if (options.kind === 'signature' || options.kind === 'initials') {
      // Contract: a signature or initials image belongs to its uploader and is listed in user.config.
      const user = await trx
        .selectFrom('users')
        .select('config')
        .where('id', '=', actor.userId)
        .executeTakeFirstOrThrow();
      const config = readJson<Record<string, unknown>>(user.config, {});
      const list = Array.isArray(config[options.kind]) ? (config[options.kind] as unknown[]) : [];
      config[options.kind] = [...list, { imageId: saved.id, name: options.name }];
      await trx
        .updateTable('users')
        .set({ config: writeJson(config) })
        .where('id', '=', actor.userId)
        .execute();
    }
    await record(trx, {
      tenantId: actor.tenantId,
      actorId: actor.name,
      activityType: 'fileUploaded',
      objectType: 'file',
      objectId: saved.id,
      requestId: actor.requestId,
      data: { kind: options.kind, size: saved.size, name: options.name },
      at: deps.clock.now(),
    });
  });
  return {
    file: fileView(saved),
    storage: { used: storage.used + Number(saved.size), limit: storage.limit },
    record: saved,
  };
}

export function isPdf(file: Pick<FileRecord, 'mimetype' | 'name'>): boolean {
  return file.mimetype === 'application/pdf' || file.name.toLowerCase().endsWith('.pdf');
}
