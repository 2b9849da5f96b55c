import type { Kysely } from 'kysely';
import type { Deps } from '../deps.js';
import { FileNotUsable } from '../../base/errors.js';
import { checkDraftFiles, claimFiles, FROM_SAVE_FILE, type FileUse } from '../changes/file-usage.js';
import type { ImageVisual, SignatureVisual, TextAnnotation } from '../../pdf/visuals/visual-types.js';
import type { Database } from '../../store/db/schema.js';
import type { FileRecord } from '../../store/files/file-store.js';
import type { Actor } from '../access/actor.js';
import { loadUsableStamp, type StampUser } from '../stamps/load-usable-stamp.js';
import {
  positionOf,
  type ImageEntry,
  type SignatureEntry,
  type TextEntry,
} from '../documents/visual-entries.js';

export interface VisualRequest {
  signatures?: SignatureEntry[] | undefined;
  images?: ImageEntry[] | undefined;
  annotations?: TextEntry[] | undefined;
}

/** Whether a request draws anything on the document (signatures, images or text annotations). */
export function drawsAnything(request: VisualRequest): boolean {
  return Boolean(request.signatures?.length || request.images?.length || request.annotations?.length);
}

export interface ResolvedVisuals {
  signatures: SignatureVisual[];
  images: ImageVisual[];
  annotations: TextAnnotation[];
}

/** Who places visuals: a user, or an external recipient through their share. */
export type Placer = { kind: 'user'; actor: Actor } | { kind: 'share'; shareId: string; tenantId: string };

const SIGNATURE_KINDS = ['signature', 'initials'];
const SHARE_SIGNATURE_KINDS = ['share-signature', 'share-initials'];

async function ownFile(db: Kysely<Database>, placer: Placer, id: string): Promise<FileRecord | undefined> {
  const tenantId = placer.kind === 'user' ? placer.actor.tenantId : placer.tenantId;
  const file = await db
    .selectFrom('files')
    .selectAll()
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  if (!file) return undefined;
  if (placer.kind === 'user') return file.owner_id === placer.actor.userId ? file : undefined;
  const shareId = (file as FileRecord & { share_id?: string | null }).share_id;
  return shareId === placer.shareId ? file : undefined;
}

/** Upload files a request's visuals use, to be claimed when the change commits (spec Files usage rule 3). */
export interface VisualClaims {
  placer: Placer;
  documentId: string;
  uses: FileUse[];
}

/**
 * Turns the API's `signatures`, `images` and `annotations` into what the PDF engine draws, reading only:
 * signature and initials images must come from the signer's own signature uploads (usable any number
 * of times, Contract); each image must be an unused upload or the document's own barcode, checked here
 * and claimed by `claimVisualFiles` in the transaction that commits the result (a request that lost
 * the race for a file then fails there, and the drawn file is discarded); the same id several times in
 * one request is one use. `{{{documentId}}}` and `{{{documentTitle}}}` in texts are replaced.
 */
export async function resolveVisuals(
  db: Kysely<Database>,
  deps: Deps,
  options: {
    /** Images of `stamp` entries by entry index, loaded beforehand (loadStampImages). */
    stamps?: Map<number, Uint8Array>;
    placer: Placer;
    request: VisualRequest;
    document: { id: string; title: string; barcodeFileId: string | null };
    /** Where the entries sit in the request, for error messages (`optionalData.` in POST /documents). */
    fieldPrefix?: string | undefined;
    now: Date;
  },
): Promise<{ visuals: ResolvedVisuals; claims: VisualClaims }> {
  const { placer, request, document } = options;
  const at = options.fieldPrefix ?? '';
  // Every box is known before any file is read.
  const boxes = {
    signatures: (request.signatures ?? []).map((e, i) => positionOf(e, `${at}signatures[${i}]`)),
    images: (request.images ?? []).map((e, i) => positionOf(e, `${at}images[${i}]`)),
    annotations: (request.annotations ?? []).map((e, i) => positionOf(e, `${at}annotations[${i}]`)),
  };
  const bytes = async (file: FileRecord) => new Uint8Array(await deps.files.read(file));
  const imageUses: FileUse[] = [];
  const signatures: SignatureVisual[] = [];
  for (const [i, entry] of (request.signatures ?? []).entries()) {
    const field = `${at}signatures[${i}].blob`;
    let image: Uint8Array | undefined;
    if (entry.type === 'stamp' && entry.blob) {
      // spec Signature entry: for type stamp the blob is a stamp id (stamps became resources).
      image = options.stamps?.get(i);
      if (!image) throw new FileNotUsable(`${field}: no such stamp among the stamps you may use`);
    } else if (entry.blob) {
      const file = await ownFile(db, placer, entry.blob);
      const allowed = placer.kind === 'user' ? SIGNATURE_KINDS : SHARE_SIGNATURE_KINDS;
      if (file && allowed.includes(file.kind)) image = await bytes(file);
      else if (entry.type === 'image' || entry.type === 'stamp' || entry.type === 'annotation') {
        imageUses.push({
          fileId: entry.blob,
          field,
          kinds: placer.kind === 'user' ? [...FROM_SAVE_FILE] : ['share-file', 'share-stamp'],
        });
      } else {
        const from =
          placer.kind === 'user'
            ? 'POST /files/signature or /files/initials'
            : 'POST /share/upload/signature or /share/upload/initials';
        throw new FileNotUsable(`${field}: a ${entry.type} image must be uploaded with ${from}`);
      }
    }
    signatures.push({
      type: entry.type,
      pages: entry.pages ?? [1],
      position: boxes.signatures[i]!,
      ...(image ? { image } : {}),
      ...(entry.timestamp !== undefined ? { timestamp: entry.timestamp } : {}),
      ...(entry.comment !== undefined ? { comment: entry.comment } : {}),
      ...(entry.decorationType !== undefined ? { decorationType: entry.decorationType } : {}),
    });
  }
  for (const [i, entry] of (request.images ?? []).entries()) {
    if (entry.blob === document.barcodeFileId) continue;
    imageUses.push({
      fileId: entry.blob,
      field: `${at}images[${i}].blob`,
      kinds: placer.kind === 'user' ? [...FROM_SAVE_FILE] : ['share-file'],
    });
  }
  // The check drafts make (own upload, right endpoint, unused), without claiming anything yet.
  const usable =
    placer.kind === 'user'
      ? await checkDraftFiles(db, placer.actor, imageUses, options.now)
      : await checkShareFiles(db, placer, imageUses, document.id);
  for (const [i, visual] of signatures.entries()) {
    const file = usable.get(`${at}signatures[${i}].blob`);
    if (file && visual) visual.image = await bytes(file);
  }
  // Read through `db`: inside a transaction on SQLite, that transaction holds the one connection.
  const usesBarcode = (request.images ?? []).some((entry) => entry.blob === document.barcodeFileId);
  const barcode =
    document.barcodeFileId && usesBarcode
      ? await db.selectFrom('files').selectAll().where('id', '=', document.barcodeFileId).executeTakeFirst()
      : undefined;
  const images: ImageVisual[] = [];
  for (const [i, entry] of (request.images ?? []).entries()) {
    const file = entry.blob === document.barcodeFileId ? barcode : usable.get(`${at}images[${i}].blob`);
    if (!file) throw new FileNotUsable(`${at}images[${i}].blob: no such file`);
    images.push({
      pages: entry.pages ?? [1],
      position: boxes.images[i]!,
      image: await bytes(file),
      ...(entry.comment !== undefined ? { comment: entry.comment } : {}),
      ...(entry.subtype !== undefined ? { subtype: entry.subtype } : {}),
    });
  }
  const annotations: TextAnnotation[] = (request.annotations ?? []).map((entry, i) => ({
    ...entry,
    pages: entry.pages ?? [1],
    position: boxes.annotations[i]!,
    text: entry.text
      .replaceAll('{{{documentId}}}', document.id)
      .replaceAll('{{{documentTitle}}}', document.title),
  }));
  return {
    visuals: { signatures, images, annotations },
    claims: { placer, documentId: document.id, uses: imageUses },
  };
}

/**
 * Claims the upload files resolved visuals use, in the transaction that commits the drawn result: a
 * compare-and-set on each file's `used_by`, so of two requests racing for one file exactly one wins and
 * the other fails FILE_NOT_USABLE with nothing written.
 */
export async function claimVisualFiles(
  trx: Kysely<Database>,
  claims: VisualClaims,
  now: Date,
): Promise<void> {
  const { placer, uses, documentId } = claims;
  if (uses.length === 0) return;
  if (placer.kind === 'user') await claimFiles(trx, placer.actor, uses, `document:${documentId}`, now);
  else await claimShareFiles(trx, placer, uses, documentId, now);
}

/**
 * A recipient's files the share uploaded, each unused or already this document's, checked without
 * claiming them.
 */
async function checkShareFiles(
  db: Kysely<Database>,
  placer: Extract<Placer, { kind: 'share' }>,
  uses: FileUse[],
  documentId: string,
): Promise<Map<string, FileRecord>> {
  const result = new Map<string, FileRecord>();
  for (const use of uses) {
    const file = await ownFile(db, placer, use.fileId);
    if (!file || !use.kinds.includes(file.kind))
      throw new FileNotUsable(`${use.field}: no such file among this share's uploads`);
    if (file.used_by !== null && file.used_by !== `document:${documentId}`)
      throw new FileNotUsable(`${use.field}: the file is already used`);
    result.set(use.field, file);
  }
  return result;
}

/** Files a recipient uploaded through the share are claimed like a user's (each once). */
async function claimShareFiles(
  trx: Kysely<Database>,
  placer: Extract<Placer, { kind: 'share' }>,
  uses: FileUse[],
  documentId: string,
  now: Date,
): Promise<void> {
  await checkShareFiles(trx, placer, uses, documentId);
  for (const use of uses) {
    const updated = await trx
      .updateTable('files')
      .set({ used_by: `document:${documentId}`, used_at: now.toISOString() })
      .where('id', '=', use.fileId)
      .where((eb) => eb.or([eb('used_by', 'is', null), eb('used_by', '=', `document:${documentId}`)]))
      .executeTakeFirst();
    if (updated.numUpdatedRows === 0n) throw new FileNotUsable(`${use.field}: the file is already used`);
  }
}

/**
 * Loads the images of `stamp` entries, before the transaction that draws them: a stamp id the caller
 * may not use is FILE_NOT_USABLE naming the field.
 */
export async function loadStampImages(
  deps: Deps,
  user: StampUser,
  signatures: SignatureEntry[] | undefined,
  fieldPrefix = '',
): Promise<Map<number, Uint8Array>> {
  const images = new Map<number, Uint8Array>();
  for (const [i, entry] of (signatures ?? []).entries()) {
    if (entry.type !== 'stamp' || !entry.blob) continue;
    const { file } = await loadUsableStamp(deps, user, entry.blob, `${fieldPrefix}signatures[${i}].blob`);
    images.set(i, new Uint8Array(await deps.files.read(file)));
  }
  return images;
}
