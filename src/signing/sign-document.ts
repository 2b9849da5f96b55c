import type { Kysely } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { assertSignatureProvider } from './signature-provider.js';
import { canEdit, loadVisible, type DocumentRow } from '../core/access/document-access.js';
import { addRevision, type DocumentChanger } from '../core/changes/change-document.js';
import { replaceMainFile, saveNextMainFile } from '../core/changes/new-main-file.js';
import { Forbidden, ValidationError, VersionMismatch } from '../core/errors.js';
import { type PadesLevel } from '../pdf/sign-pdf.js';
import { drawVisuals } from '../core/signing/apply-visuals.js';
import { queueSealOnComplete, sealOnCompleteNow } from './seal-on-complete.js';
import {
  claimVisualFiles,
  loadStampImages,
  type Placer,
  type SignatureEntry,
  type VisualRequest,
} from '../core/signing/visual-input.js';
import { getProperties } from '../core/settings/tenant-settings.js';
import type { Recipient } from '../core/sharing/recipient.js';
import { assertShareCanAct } from '../core/sharing/recipient-actions.js';
import { assertRequiredFilesSubmitted } from '../core/sharing/share-fields.js';
import type { ShareRow } from '../core/sharing/share-types.js';
import { completeShare, loadDocumentForUpdate } from '../core/sharing/workflow.js';
import type { Database } from '../store/db/schema.js';
import type { FileRecord } from '../store/files/file-store.js';
import { writeTransaction } from '../store/db/dialect.js';
import { defaultLevel, userSignerName } from '../core/signing/seal.js';

export type Signing = { kind: 'user'; actor: Actor } | { kind: 'share'; recipient: Recipient };

export interface SignOutcome {
  status: 'SUCCESS';
  levelAchieved: PadesLevel;
  fellBack: boolean;
  reason?: string;
  /** The document's share state after this call (`completed` when this was the last signature). */
  shareStateName: string | null;
}

export async function mainFileBytes(
  deps: Deps,
  doc: DocumentRow,
): Promise<{ file: FileRecord; bytes: Uint8Array }> {
  if (!doc.main_file_id) throw new ValidationError('The document has no main file to sign');
  const file = await deps.files.find(doc.tenant_id, doc.main_file_id);
  if (!file) throw new ValidationError('The document’s main file is missing');
  return { file, bytes: new Uint8Array(await deps.files.read(file)) };
}

/**
 * PUT /documents/sign/:version, and PUT /share/document/sign/:version for external recipients (spec
 * Documents; DESIGN lessons): each signature entry is drawn as an annotation in the signer's own
 * revision, closed by a PAdES signature made with the organisation key in the signer's name, as an
 * incremental update. The main file gets a new id and the old one stays a revision. A recipient's
 * signature completes their share; the last one completes the document, which is then sealed when
 * `sealOnComplete` is on (Contract).
 *
 * DESIGN: remote calls never run inside a database transaction. The file is drawn and signed first
 * (the TSA answers meanwhile, while other writers go on), reading only; then one short transaction
 * checks `_version`, claims the image files and commits. A request that lost the race to another
 * change of the same version gets 409 and its signed file is discarded (its bytes are swept).
 */
export async function signDocument(
  deps: Deps,
  signing: Signing,
  options: {
    id: string;
    version: number;
    signatures: SignatureEntry[];
    level?: PadesLevel | undefined;
    signatureProvider?: string | undefined;
  } & Omit<VisualRequest, 'signatures'>,
): Promise<SignOutcome> {
  await assertSignatureProvider(deps, options.signatureProvider);
  const { doc, share, signerName, by, placer } = await authorizeSigning(deps, signing, options.id);
  if (doc.version !== options.version) throw new VersionMismatch();
  const properties = await getProperties(deps, { tenantId: doc.tenant_id });
  const level = options.level ?? properties.defaultPadesLevel ?? defaultLevel(deps);
  const now = deps.clock.now();
  const { file: previous, bytes } = await mainFileBytes(deps, doc);
  const stamps = await loadStampImages(
    deps,
    signing.kind === 'user' ? signing.actor : signing.recipient,
    options.signatures,
  );
  const drawn = await drawVisuals(deps.db, deps, {
    pdf: bytes,
    stamps,
    placer,
    request: { signatures: options.signatures, images: options.images, annotations: options.annotations },
    document: { id: doc.id, title: doc.title, barcodeFileId: doc.barcode_file_id },
    sign: { signerName, level },
    author: signerName,
    now,
  });
  const { signature: signed } = drawn;
  const committed = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const updated = await commitSignature(trx, deps, {
      doc,
      share,
      by,
      previous,
      bytes: signed.pdf,
      expectedVersion: options.version,
      data: { levelAchieved: signed.levelAchieved, fellBack: signed.fellBack },
      now,
    });
    await claimVisualFiles(trx, drawn.claims, now);
    return { updated, seal: await queueSealIfCompleted(trx, { doc: updated, by, properties, now }) };
  });
  const state = await afterSignature(deps, committed.updated, by, committed.seal);
  return {
    status: 'SUCCESS',
    levelAchieved: signed.levelAchieved,
    fellBack: signed.fellBack,
    ...(signed.reason ? { reason: signed.reason } : {}),
    shareStateName: state,
  };
}

/**
 * Makes signed bytes the document's main file inside the caller's transaction: for a signer with a share
 * this completes the share (and the document when it was the last), otherwise it is the owner's own
 * signature. Compare-and-set on `expectedVersion` either way.
 */
export async function commitSignature(
  trx: Kysely<Database>,
  deps: Deps,
  options: {
    doc: DocumentRow;
    share: ShareRow | undefined;
    by: DocumentChanger;
    previous: FileRecord;
    bytes: Uint8Array;
    expectedVersion: number;
    data: Record<string, unknown>;
    now: Date;
  },
): Promise<DocumentRow> {
  const { doc, share, by, previous, now } = options;
  if (!share) {
    return replaceMainFile(trx, deps, {
      doc,
      previous,
      bytes: options.bytes,
      by,
      expectedVersion: options.expectedVersion,
      signed: true,
      activityType: 'documentSigned',
      event: 'documentSigned',
      reason: 'signed',
      data: options.data,
      now,
    });
  }
  return saveNextMainFile(trx, deps, { doc, previous, bytes: options.bytes, now }, async (saved) => {
    const current = await loadDocumentForUpdate(trx, doc.id);
    if (current.version !== options.expectedVersion) throw new VersionMismatch();
    const updated = await completeShare(trx, deps, {
      share,
      by,
      now,
      event: 'documentSigned',
      activityType: 'documentSigned',
      data: { ...options.data, file: saved.id },
      set: { main_file_id: saved.id, is_signed: 1 },
    });
    await addRevision(trx, { documentId: doc.id, fileId: saved.id, reason: 'signed', actor: by.name, now });
    return updated;
  });
}

/**
 * Inside a signature's transaction: when it completed the document and the tenant seals on completion
 * (`sealOnComplete`, read before the transaction), queues that seal; its job id, else undefined.
 */
export async function queueSealIfCompleted(
  trx: Kysely<Database>,
  options: { doc: DocumentRow; by: DocumentChanger; properties: { sealOnComplete: boolean }; now: Date },
): Promise<string | undefined> {
  if (options.doc.share_state !== 'completed' || !options.properties.sealOnComplete) return undefined;
  return queueSealOnComplete(trx, options);
}

/**
 * After a signature's commit, outside its transaction: runs the seal on completion it queued, if any
 * (Contract: completing a sign share seals the document in the same call). Its share state.
 */
export async function afterSignature(
  deps: Deps,
  updated: DocumentRow,
  by: DocumentChanger,
  sealJobId: string | undefined,
): Promise<string | null> {
  if (sealJobId) await sealOnCompleteNow(deps, sealJobId, by.requestId);
  return updated.share_state;
}

export async function authorizeSigning(
  deps: Deps,
  signing: Signing,
  documentId: string,
): Promise<{
  doc: DocumentRow;
  share: ShareRow | undefined;
  signerName: string;
  by: DocumentChanger;
  placer: Placer;
}> {
  const now = deps.clock.now();
  if (signing.kind === 'share') {
    const { recipient } = signing;
    if (!recipient.unlocked)
      throw new Forbidden('This share is protected: unlock it with POST /share/unlock');
    const share = await deps.db
      .selectFrom('shares')
      .selectAll()
      .where('id', '=', recipient.shareId)
      .executeTakeFirstOrThrow();
    if (share.document_id !== documentId) throw new ValidationError('id', 'must be the shared document');
    assertShareCanAct(share, now);
    if (share.purpose !== 'sign') throw new Forbidden(`This share is for ${share.purpose}, not signing`);
    await assertRequiredFilesSubmitted(deps.db, share);
    const doc = await loadDocumentForUpdate(deps.db, documentId);
    return {
      doc,
      share,
      signerName: share.share_to,
      by: { tenantId: share.tenant_id, name: share.share_to, requestId: recipient.requestId },
      placer: { kind: 'share', shareId: share.id, tenantId: share.tenant_id },
    };
  }
  const { actor } = signing;
  const doc = await loadVisible(deps.db, actor, documentId);
  if (doc.kind !== 'document') throw new ValidationError('id', 'must name a document');
  const share = await deps.db
    .selectFrom('shares')
    .selectAll()
    .where('document_id', '=', doc.id)
    .where('user_id', '=', actor.userId)
    .where('purpose', '=', 'sign')
    .where('status', 'in', ['active', 'waiting'])
    .orderBy('position')
    .executeTakeFirst();
  if (share) {
    assertShareCanAct(share, now);
    await assertRequiredFilesSubmitted(deps.db, share);
  } else if (!(await canEdit(deps.db, actor, doc, now)))
    throw new Forbidden(
      'Only the owner, an administrator, a signer or a user it is shared with for edit may sign this document',
    );
  return {
    doc,
    share,
    signerName: await userSignerName(deps.db, actor),
    by: actor,
    placer: { kind: 'user', actor },
  };
}
