import type { Kysely } from 'kysely';
import type { Actor } from '../access/actor.js';
import type { Deps } from '../deps.js';
import type { DocumentRow } from '../access/document-access.js';
import { ValidationError } from '../../base/errors.js';
import type { PadesLevel } from '../../pdf/sign-pdf.js';
import type { Database } from '../../store/db/schema.js';
import { applyVisuals, drawnChange, type SignAs } from './apply-visuals.js';
import { replaceMainFile } from '../changes/new-main-file.js';
import { tenantDefaultLevel, userSignerName } from './seal.js';
import { loadStampImages, type VisualRequest } from './visual-input.js';

/** What a create or change call may carry to be signed or annotated in the same call. */
export interface VisualsInCall extends VisualRequest {
  /** PAdES level of the signature; default the tenant's `defaultPadesLevel`. */
  level?: PadesLevel | undefined;
}

/** What the call asked, checked and loaded before its transaction. */
export interface PreparedVisuals {
  request: VisualRequest;
  stamps: Map<number, Uint8Array>;
  /** Present when `signatures` close the revision with a signature; otherwise an annotate. */
  sign: SignAs | undefined;
  /** Where the entries sit in the request (`optionalData.` in POST /documents). */
  fieldPrefix: string;
}

/** How a signature made in the call came out (as PUT /documents/sign answers it). */
export interface SigningInCall {
  levelAchieved: PadesLevel;
  fellBack: boolean;
  reason?: string;
  /** The signing certificate's revocation could not be checked before signing (issue 38). */
  warnings?: string[];
}

/**
 * Before the transaction of POST /documents or PUT /documents/:version (DESIGN: Signing inside other
 * calls): loads the images of stamp entries, the caller's signer name and the level, reading only.
 * Undefined when the call draws nothing.
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
 * Inside the call's transaction, after it made its own change: draws the prepared visuals on the
 * document's main file with the engine of PUT /documents/sign and /annotate (same file usage rules,
 * stamps, positions and messages), and makes the result the next main file. Signatures close the
 * revision with the organisation key in the caller's name (`documentSigned`); images and annotations
 * alone are an annotate, with no signature. Compare-and-set on the version, bumped only when the call
 * made no change of its own (`bumpVersion`): a call is one change. Any failure rolls back the whole
 * call, so nothing is left half-written.
 */
export async function applyVisualsInCall(
  trx: Kysely<Database>,
  deps: Deps,
  options: {
    actor: Actor;
    doc: DocumentRow;
    prepared: PreparedVisuals;
    expectedVersion: number;
    /** False when the call already counted its change (the document was created or edited). */
    bumpVersion: boolean;
    now: Date;
  },
): Promise<{ doc: DocumentRow; signing: SigningInCall | undefined }> {
  const { actor, doc, prepared, now } = options;
  // Read through the transaction: on SQLite it holds the one connection.
  const previous = doc.main_file_id
    ? await trx.selectFrom('files').selectAll().where('id', '=', doc.main_file_id).executeTakeFirst()
    : undefined;
  if (!previous) {
    throw new ValidationError('body.pdfFile', 'is required to sign or annotate the document');
  }
  const applied = await applyVisuals(trx, deps, {
    pdf: new Uint8Array(await deps.files.read(previous)),
    placer: { kind: 'user', actor },
    request: prepared.request,
    stamps: prepared.stamps,
    document: { id: doc.id, title: doc.title, barcodeFileId: doc.barcode_file_id },
    sign: prepared.sign,
    author: actor.name,
    fieldPrefix: prepared.fieldPrefix,
    now,
  });
  const { signature } = applied;
  const updated = await replaceMainFile(trx, deps, {
    doc,
    previous,
    bytes: applied.pdf,
    by: actor,
    expectedVersion: options.expectedVersion,
    bumpVersion: options.bumpVersion,
    now,
    ...drawnChange(applied),
  });
  return {
    doc: updated,
    signing: signature
      ? {
          levelAchieved: signature.levelAchieved,
          fellBack: signature.fellBack,
          ...(signature.reason ? { reason: signature.reason } : {}),
          ...(signature.warnings.length > 0 ? { warnings: signature.warnings } : {}),
        }
      : undefined,
  };
}
