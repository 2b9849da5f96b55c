import type { Static } from 'typebox';
import type { SignBody } from './contract.js';
import type { Kysely } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { assertSignatureProvider } from './signature-provider.js';
import { canEdit, loadVisible, type DocumentRow } from '../core/access/document-access.js';
import { addRevision, type DocumentChanger } from '../core/changes/change-document.js';
import { replaceMainFile, saveNextMainFile } from '../core/changes/new-main-file.js';
import { Forbidden, NotFound, ValidationError, VersionMismatch } from '../base/errors.js';
import type { ArchiveExpiry } from '../pdf/archive-timestamp.js';
import type { PadesLevel, SignPdfResult } from '../pdf/sign-pdf.js';
import { drawnChange, drawVisuals, type AppliedVisuals } from '../core/signing/apply-visuals.js';
import { queueSealOnComplete, sealOnCompleteNow } from './seal-on-complete.js';
import {
  claimVisualFiles,
  loadStampImages,
  type Placer,
  type VisualRequest,
} from '../core/signing/visual-input.js';
import { getProperties } from '../core/settings/tenant-settings.js';
import type { Recipient, RecipientCaller } from '../core/access/recipient-caller.js';
import { assertShareCanAct } from '../core/sharing/recipient-actions.js';
import { assertRequiredFilesSubmitted, withShareFieldTexts } from '../core/sharing/share-fields.js';
import type { ShareRow } from '../core/sharing/share-types.js';
import { completeShare, loadDocumentForUpdate } from '../core/sharing/workflow.js';
import type { Database } from '../store/db/schema.js';
import type { FileRecord } from '../store/files/file-store.js';
import { writeTransaction } from '../store/db/dialect.js';
import { defaultLevel, userSignerName } from '../core/signing/seal.js';

/**
 * Who signs: a user (for their share `shareId` when they act on one, else the share of theirs the
 * document awaits, or as who may edit it), or an external recipient through their share.
 */
export type Signing =
  { kind: 'user'; actor: Actor; shareId?: string | undefined } | { kind: 'share'; recipient: Recipient };

/** A signer allowed to draw on a document, and what their change completes (their share, if any). */
export interface Signer {
  doc: DocumentRow;
  share: ShareRow | undefined;
  signerName: string;
  by: DocumentChanger;
  placer: Placer;
  /** Whose stamps the signer may use. */
  caller: RecipientCaller;
}

export interface SignOutcome {
  status: 'SUCCESS';
  levelAchieved: PadesLevel;
  fellBack: boolean;
  reason?: string;
  /** The signing certificate's revocation could not be checked before signing (issue 38). */
  warnings?: string[];
  /** The document's share state after this call (`completed` when this was the last signature). */
  shareStateName: string | null;
}

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

/**
 * PUT /documents/sign/:version, and PUT /share/document/sign/:version for external recipients (spec
 * Documents; DESIGN lessons), which POST /share/execute and POST /inbox/action are on a sign share: each signature entry is drawn as an annotation in the signer's own
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
  options: Static<typeof SignBody> & { version: number },
): Promise<SignOutcome> {
  const provider = await assertSignatureProvider(deps, options.signatureProvider);
  const signer = await authorizeSigning(deps, signing, options.id);
  if (signer.doc.version !== options.version) throw new VersionMismatch();
  // A recipient's answers to their share's fields, checked, and its read-only fields (predefined
  // texts, imported custom fields) are written with their signature (spec Signature field; Custom field).
  const annotations = signer.share
    ? await withShareFieldTexts(deps.db, signer.share, options)
    : options.annotations;
  const { signature, shareStateName } = await drawAndCommit(
    deps,
    signer,
    {
      request: { signatures: options.signatures, images: options.images, annotations },
      level: options.level,
      sign: true,
      provider,
    },
    (trx, drawn, now) =>
      commitSignature(trx, deps, {
        doc: signer.doc,
        share: signer.share,
        by: signer.by,
        previous: drawn.previous,
        bytes: drawn.pdf,
        expectedVersion: options.version,
        data: { levelAchieved: drawn.signature.levelAchieved, fellBack: drawn.signature.fellBack },
        archive: drawn.signature.archive,
        now,
      }),
  );
  return { status: 'SUCCESS', ...signingOutcome(signature), shareStateName };
}

/** How a signature came out, as the sign calls answer it. */
export function signingOutcome(
  signature: SignPdfResult,
): Pick<SignOutcome, 'levelAchieved' | 'fellBack' | 'reason' | 'warnings'> {
  return {
    levelAchieved: signature.levelAchieved,
    fellBack: signature.fellBack,
    ...(signature.reason ? { reason: signature.reason } : {}),
    ...(signature.warnings.length > 0 ? { warnings: signature.warnings } : {}),
  };
}

export interface DrawOptions {
  request: VisualRequest;
  level?: PadesLevel | undefined;
  /** Close the revision with a PAdES signature in the signer's name; without it, an annotate. */
  sign?: boolean | undefined;
  /** The `signatureProvider` whose key signs (assertSignatureProvider); by default the installation's. */
  provider?: string | undefined;
}

/** The signature drawAndCommit made, if any, and the document's share state after the commit. */
export interface Committed {
  signature: SignPdfResult | undefined;
  shareStateName: string | null;
}

/** What a signer drew, to become the main file in the commit's transaction. */
export interface Drawn extends AppliedVisuals {
  /** The main file it was drawn on. */
  previous: FileRecord;
}

/**
 * The path of every call that draws on a document in a signer's name (the sign calls, and the
 * recipients' POST /share/execute, PUT /share/reject and POST /inbox/action, spec Files usage rule 3):
 * the visuals are drawn on the main file and, with `sign`, the revision is closed by a PAdES signature
 * in the signer's name, reading only and outside any transaction (DESIGN: remote calls); then one short
 * transaction in which `commit` makes the drawn file the main file (a compare-and-set on the version:
 * a lost race is 409 and the drawn bytes are swept), the image files are claimed and, when that
 * completed the document, its seal is queued; after the commit the seal is made.
 */
export async function drawAndCommit(
  deps: Deps,
  signer: Signer,
  options: DrawOptions & { sign: true },
  commit: (
    trx: Kysely<Database>,
    drawn: Drawn & { signature: SignPdfResult },
    now: Date,
  ) => Promise<DocumentRow>,
): Promise<Committed & { signature: SignPdfResult }>;
export async function drawAndCommit(
  deps: Deps,
  signer: Signer,
  options: DrawOptions,
  commit: (trx: Kysely<Database>, drawn: Drawn, now: Date) => Promise<DocumentRow>,
): Promise<Committed>;
export async function drawAndCommit(
  deps: Deps,
  signer: Signer,
  options: DrawOptions,
  commit: (
    trx: Kysely<Database>,
    drawn: Drawn & { signature: SignPdfResult },
    now: Date,
  ) => Promise<DocumentRow>,
): Promise<Committed> {
  const { doc, signerName, by } = signer;
  const properties = await getProperties(deps, { tenantId: doc.tenant_id });
  const level = options.level ?? properties.defaultPadesLevel ?? defaultLevel(deps);
  const now = deps.clock.now();
  const { file: previous, bytes } = await mainFileBytes(deps, doc);
  const stamps = await loadStampImages(deps, signer.caller, options.request.signatures);
  const { claims, ...applied } = await drawVisuals(deps.db, deps, {
    pdf: bytes,
    stamps,
    placer: signer.placer,
    request: options.request,
    document: { id: doc.id, title: doc.title, barcodeFileId: doc.barcode_file_id },
    sign: options.sign ? { signerName, level, provider: options.provider } : undefined,
    author: signerName,
    now,
  });
  const committed = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    // The signature is there exactly when `sign` asked for it (the overloads above say so to callers).
    const drawn = { ...applied, previous } as Drawn & { signature: SignPdfResult };
    const updated = await commit(trx, drawn, now);
    await claimVisualFiles(trx, claims, now);
    return { updated, seal: await queueSealIfCompleted(trx, { doc: updated, by, properties, now }) };
  });
  const shareStateName = await afterSignature(deps, committed.updated, by, committed.seal);
  return { signature: applied.signature, shareStateName };
}

/**
 * Makes what a signer drew the document's main file, in drawAndCommit's transaction, before the call
 * records its own action: `documentSigned` when it was closed by a signature, else `documentAnnotated`
 * (core/signing drawnChange). Compare-and-set on the version the signer was authorized on.
 */
export function commitDrawn(
  trx: Kysely<Database>,
  deps: Deps,
  signer: Signer,
  drawn: Drawn,
  now: Date,
): Promise<DocumentRow> {
  return replaceMainFile(trx, deps, {
    doc: signer.doc,
    previous: drawn.previous,
    bytes: drawn.pdf,
    by: signer.by,
    expectedVersion: signer.doc.version,
    ...drawnChange(drawn),
    now,
  });
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
    /** A B-LTA signature's archive timestamp (replaceMainFile). */
    archive?: ArchiveExpiry | undefined;
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
      archive: options.archive,
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
      set: {
        main_file_id: saved.id,
        is_signed: 1,
        ...(options.archive ? { archive_expires_at: options.archive.expiresAt.toISOString() } : {}),
      },
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

/**
 * Who may sign the document, and for which share: an external recipient their sign share, whose turn
 * it is; a user their sign share (the one named, else the first the document awaits), or, with no
 * share, when they may edit the document (its owner, an administrator, a user it is shared with for
 * edit). Unseen is 404, seen but not theirs to sign 403.
 */
export async function authorizeSigning(deps: Deps, signing: Signing, documentId: string): Promise<Signer> {
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
    return shareSigner(deps, { kind: 'external', recipient }, share, now);
  }
  const { actor } = signing;
  const doc = await loadVisible(deps.db, actor, documentId);
  if (doc.kind !== 'document') throw new ValidationError('id', 'must name a document');
  const share = await deps.db
    .selectFrom('shares')
    .selectAll()
    .where('document_id', '=', doc.id)
    .where('user_id', '=', actor.userId)
    .$call((q) =>
      signing.shareId
        ? q.where('id', '=', signing.shareId)
        : q.where('purpose', '=', 'sign').where('status', 'in', ['active', 'waiting']),
    )
    .orderBy('position')
    .executeTakeFirst();
  if (share) return shareSigner(deps, { kind: 'internal', actor }, share, now);
  if (signing.shareId) throw new NotFound('No such share');
  if (!(await canEdit(deps.db, actor, doc, now)))
    throw new Forbidden(
      'Only the owner, an administrator, a signer or a user it is shared with for edit may sign this document',
    );
  return {
    doc,
    share: undefined,
    signerName: await userSignerName(deps.db, actor),
    by: actor,
    placer: { kind: 'user', actor },
    caller: { kind: 'internal', actor },
  };
}

/**
 * A recipient signing through their sign share: its turn, not ended or expired, its required files
 * submitted (spec Sharing: required fields enforced).
 */
async function shareSigner(deps: Deps, caller: RecipientCaller, share: ShareRow, now: Date): Promise<Signer> {
  assertShareCanAct(share, now);
  if (share.purpose !== 'sign') throw new Forbidden(`This share is for ${share.purpose}, not signing`);
  await assertRequiredFilesSubmitted(deps.db, share);
  return { ...(await recipientSigner(deps, caller, share)), share };
}

/**
 * A recipient as the signer of what they draw on their share's document: an external one by the name
 * the share was sent to, with the share's uploads; a user by their name, with their own files.
 */
export async function recipientSigner(deps: Deps, caller: RecipientCaller, share: ShareRow): Promise<Signer> {
  const doc = await loadDocumentForUpdate(deps.db, share.document_id);
  if (caller.kind === 'internal') {
    const { actor } = caller;
    return {
      doc,
      share,
      signerName: await userSignerName(deps.db, actor),
      by: actor,
      placer: { kind: 'user', actor },
      caller,
    };
  }
  return {
    doc,
    share,
    signerName: share.share_to,
    by: { tenantId: share.tenant_id, name: share.share_to, requestId: caller.recipient.requestId },
    placer: { kind: 'share', shareId: share.id, tenantId: share.tenant_id },
    caller,
  };
}
