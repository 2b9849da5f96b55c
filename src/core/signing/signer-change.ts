import type { Kysely } from 'kysely';
import type { Actor } from '../access/actor.js';
import type { Deps } from '../deps.js';
import type { DocumentRow } from '../access/document-access.js';
import type { RecipientCaller } from '../access/recipient-caller.js';
import { addRevision, type DocumentChanger } from '../changes/change-document.js';
import { mainFileBytes, replaceMainFile, saveNextMainFile } from '../changes/new-main-file.js';
import { getProperties } from '../settings/tenant-settings.js';
import type { ShareRow } from '../sharing/share-types.js';
import { recipientDrawing } from '../sharing/field-confinement.js';
import { completeShare, loadDocumentForUpdate } from '../sharing/workflow.js';
import { ValidationError, VersionMismatch } from '../../base/errors.js';
import type { ArchiveExpiry } from '../../pdf/archive-timestamp.js';
import type { PadesLevel, SignPdfResult } from '../../pdf/sign-pdf.js';
import type { Database } from '../../store/db/schema.js';
import type { FileRecord } from '../../store/files/file-store.js';
import { writeTransaction } from '../../store/db/dialect.js';
import { drawnChange, drawVisuals, type AppliedVisuals, type SignAs } from './apply-visuals.js';
import { sealOnCompleteNow } from './seal-on-complete.js';
import { sealOnCompleteJobId } from '../sharing/completion.js';
import { defaultLevel, tenantDefaultLevel, userSignerName } from './seal.js';
import {
  claimVisualFiles,
  loadStampImages,
  type Placer,
  type VisualClaims,
  type VisualRequest,
} from './visual-input.js';

/** How a signature came out, as every call that signs answers it. */
export interface SigningOutcome {
  levelAchieved: PadesLevel;
  fellBack: boolean;
  reason?: string;
  /** The signing certificate's revocation could not be checked before signing (issue 38). */
  warnings?: string[];
}

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

/** How a signature came out, as the sign calls answer it. */
export function signingOutcome(
  signature: Pick<SignPdfResult, 'levelAchieved' | 'fellBack' | 'reason' | 'warnings'>,
): SigningOutcome {
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
  /**
   * The signature of a sign share: the recipient's answers to their fields are checked and written as
   * their field asks, required fields enforced, and the share's read-only texts written with them.
   */
  shareFieldTexts?: boolean | undefined;
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
 * Inside drawAndCommit's transaction: makes what was drawn the main file and records the call's own
 * action; `sealOnComplete` is the tenant's setting, for a share whose completion completes the document.
 */
export type CommitDrawn<D extends Drawn> = (
  trx: Kysely<Database>,
  drawn: D,
  now: Date,
  sealOnComplete: boolean,
) => Promise<DocumentRow>;

/**
 * The path of every call that draws on a document in a signer's name (the sign calls, and the
 * recipients' POST /share/execute, PUT /share/reject and POST /inbox/action, spec Files usage rule 3):
 * a recipient's entries are confined to their fields first (recipientDrawing), then the visuals are drawn on the main file and, with `sign`, the revision is closed by a PAdES signature
 * in the signer's name, reading only and outside any transaction (DESIGN: remote calls); then one short
 * transaction in which `commit` makes the drawn file the main file (a compare-and-set on the version:
 * a lost race is 409 and the drawn bytes are swept), the image files are claimed and, when that
 * completed the document, its seal is queued; after the commit the seal is made.
 */
export async function drawAndCommit(
  deps: Deps,
  signer: Signer,
  options: DrawOptions & { sign: true },
  commit: CommitDrawn<Drawn & { signature: SignPdfResult }>,
): Promise<Committed & { signature: SignPdfResult }>;
export async function drawAndCommit(
  deps: Deps,
  signer: Signer,
  options: DrawOptions,
  commit: CommitDrawn<Drawn>,
): Promise<Committed>;
export async function drawAndCommit(
  deps: Deps,
  signer: Signer,
  options: DrawOptions,
  commit: CommitDrawn<Drawn & { signature: SignPdfResult }>,
): Promise<Committed> {
  const { doc, signerName, by } = signer;
  // A recipient draws only in their own fields (DESIGN "Decided this round"), checked before anything
  // is read or drawn, whichever call they draw through.
  const request = signer.share
    ? await recipientDrawing(deps.db, signer.share, options.request, {
        fieldTexts: options.shareFieldTexts === true,
      })
    : options.request;
  const properties = await getProperties(deps, { tenantId: doc.tenant_id });
  const level = options.level ?? properties.defaultPadesLevel ?? defaultLevel(deps);
  const now = deps.clock.now();
  const { file: previous, bytes } = await mainFileBytes(deps, doc);
  const drawn = await prepareChange(deps, {
    document: doc,
    previous,
    bytes,
    placer: signer.placer,
    request,
    stamps: await loadStampImages(deps, signer.caller, request.signatures),
    sign: options.sign ? { signerName, level, provider: options.provider } : undefined,
    author: signerName,
    now,
  });
  const updated = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    // The signature is there exactly when `sign` asked for it (the overloads above say so to callers).
    const changed = await commit(
      trx,
      drawn as Drawn & { signature: SignPdfResult },
      now,
      properties.sealOnComplete,
    );
    await claimVisualFiles(trx, drawn.claims, now);
    return changed;
  });
  const shareStateName = await afterSignature(deps, doc, updated, by, properties.sealOnComplete);
  return { signature: drawn.signature, shareStateName };
}

/** A signer's change as prepared outside any transaction: the drawn file and the uploads it uses. */
export interface PreparedChange extends Drawn {
  /** The image files the drawing uses, claimed in the transaction that commits it. */
  claims: VisualClaims;
}

/**
 * The first half of every signer's change (DESIGN: remote calls never run inside a database
 * transaction): `bytes`, the file `previous` holds, get the request's visuals drawn on them and, with
 * `sign`, the revision closed by a PAdES signature (the TSA, OCSP and CRL round trips and the HSM happen
 * here), reading only, with no transaction open. Nothing is stored: the commit stores the drawn file.
 */
export async function prepareChange(
  deps: Deps,
  options: {
    document: Pick<DocumentRow, 'id' | 'title' | 'barcode_file_id'>;
    previous: FileRecord;
    bytes: Uint8Array;
    placer: Placer;
    request: VisualRequest;
    stamps: Map<number, Uint8Array>;
    sign: SignAs | undefined;
    author: string;
    fieldPrefix?: string | undefined;
    now: Date;
  },
): Promise<PreparedChange> {
  const { document } = options;
  const drawn = await drawVisuals(deps, {
    pdf: options.bytes,
    stamps: options.stamps,
    placer: options.placer,
    request: options.request,
    document: { id: document.id, title: document.title, barcodeFileId: document.barcode_file_id },
    sign: options.sign,
    author: options.author,
    fieldPrefix: options.fieldPrefix,
    now: options.now,
  });
  return { ...drawn, previous: options.previous };
}

/** What a create or change call may carry to be signed or annotated in the same call. */
export interface VisualsInCall extends VisualRequest {
  /** PAdES level of the signature; default the tenant's `defaultPadesLevel`. */
  level?: PadesLevel | undefined;
}

/** What the call asked, checked and loaded before anything is drawn. */
export interface PreparedVisuals {
  request: VisualRequest;
  stamps: Map<number, Uint8Array>;
  /** Present when `signatures` close the revision with a signature; otherwise an annotate. */
  sign: SignAs | undefined;
  /** Where the entries sit in the request (`optionalData.` in POST /documents). */
  fieldPrefix: string;
}

/**
 * Before anything of POST /documents, PUT /documents/:version or POST /share is drawn or written
 * (DESIGN: Signing inside other calls): loads the images of stamp entries, the caller's signer name
 * and the level, reading only. Undefined when the call draws nothing.
 */
export async function prepareVisualsInCall(
  deps: Deps,
  actor: Actor,
  input: VisualsInCall | undefined,
  fieldPrefix = '',
): Promise<PreparedVisuals | undefined> {
  const request: VisualRequest = {
    signatures: input?.signatures,
    images: input?.images,
    annotations: input?.annotations,
  };
  const signs = (request.signatures?.length ?? 0) > 0;
  if (!signs && !request.images?.length && !request.annotations?.length) return undefined;
  return {
    request,
    stamps: await loadStampImages(deps, actor, request.signatures, fieldPrefix),
    sign: signs
      ? {
          signerName: await userSignerName(deps.db, actor),
          level: input?.level ?? (await tenantDefaultLevel(deps, actor.tenantId)),
        }
      : undefined,
    fieldPrefix,
  };
}

/**
 * The first half of a change call that also signs or annotates (POST /documents, PUT
 * /documents/:version, POST /share with `signatures`, `images` or `annotations`; spec Files usage rule
 * 3): the prepared visuals drawn on `fileId`, the file the document's main file will be once the call's
 * own change is made (the upload of `pdfFile`, or the current main file), and signed in the caller's
 * name, outside any transaction (prepareChange). The caller then opens its one transaction, makes its
 * own change and calls `commitInCall`.
 */
export async function drawInCall(
  deps: Deps,
  actor: Actor,
  prepared: PreparedVisuals,
  target: {
    document: Pick<DocumentRow, 'id' | 'title' | 'barcode_file_id'>;
    fileId: string | null;
    now: Date;
  },
): Promise<PreparedChange> {
  const previous = target.fileId ? await deps.files.find(actor.tenantId, target.fileId) : undefined;
  if (!previous) {
    throw new ValidationError('body.pdfFile', 'is required to sign or annotate the document');
  }
  return prepareChange(deps, {
    document: target.document,
    previous,
    bytes: new Uint8Array(await deps.files.read(previous)),
    placer: { kind: 'user', actor },
    request: prepared.request,
    stamps: prepared.stamps,
    sign: prepared.sign,
    author: actor.name,
    fieldPrefix: prepared.fieldPrefix,
    now: target.now,
  });
}

/**
 * The second half, inside the call's one short transaction, after the call made its own change: the
 * drawn file becomes the next main file (the one it was drawn on stays a revision), its image files are
 * claimed. Signatures are `documentSigned` in the caller's name; images and annotations alone are an
 * annotate. Compare-and-set on the version, bumped only when the call made no change of its own
 * (`bumpVersion`): a call is one change. The main file must still be the one drawn on: a race that
 * replaced it is 409, and any failure rolls back the whole call, so nothing is left half-written.
 */
export async function commitInCall(
  trx: Kysely<Database>,
  deps: Deps,
  options: {
    actor: Actor;
    doc: DocumentRow;
    drawn: PreparedChange;
    expectedVersion: number;
    /** False when the call already counted its change (the document was created or edited). */
    bumpVersion: boolean;
    now: Date;
  },
): Promise<{ doc: DocumentRow; signing: SigningOutcome | undefined }> {
  const { doc, drawn, now } = options;
  const updated = await replaceMainFile(trx, deps, {
    doc,
    previous: drawn.previous,
    bytes: drawn.pdf,
    by: options.actor,
    expectedVersion: options.expectedVersion,
    bumpVersion: options.bumpVersion,
    now,
    ...drawnChange(drawn),
  });
  await claimVisualFiles(trx, drawn.claims, now);
  return { doc: updated, signing: drawn.signature ? signingOutcome(drawn.signature) : undefined };
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
    /** The tenant's `sealOnComplete`: a share completing the document queues its seal with it. */
    sealOnComplete: boolean;
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
      sealOnComplete: options.sealOnComplete,
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
 * After a signer's commit, outside its transaction: when that commit completed the document, runs the
 * seal on completion the workflow queued with the completion, if it did (core/sharing/workflow.ts;
 * Contract: completing a sign share seals the document in the same call). Its share state.
 */
export async function afterSignature(
  deps: Deps,
  before: DocumentRow,
  updated: DocumentRow,
  by: DocumentChanger,
  /** The tenant's `sealOnComplete`, read before the commit: without it no seal was queued. */
  sealOnComplete: boolean,
): Promise<string | null> {
  if (sealOnComplete && before.share_state !== 'completed' && updated.share_state === 'completed')
    await sealOnCompleteNow(deps, sealOnCompleteJobId(updated.id, updated.version), by.requestId);
  return updated.share_state;
}
