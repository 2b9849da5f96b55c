import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Actor } from '../../core/access/actor.js';
import type { Deps } from '../../core/deps.js';
import { AppError, NotFound, ValidationError, VersionMismatch } from '../../base/errors.js';
import { finishSignatureFromFile } from '../../pdf/finish-signature-from-file.js';
import { finishSignature } from '../../pdf/finish-signature.js';
import { prepareSignature } from '../../pdf/prepare-signature.js';
import { certificateChain } from '../../pdf/archive-timestamp.js';
import { archivedRevocationBytes } from '../../pdf/sign-pdf.js';
import { SealCertificateRevoked } from '../../pki/errors.js';
import type { SignerStatus } from '../../pki/revocation-fetcher.js';
import {
  preparedStateFromJson,
  preparedStateToJson,
  type PreparedSignatureState,
  type PreparedSignatureStateJson,
} from '../../pdf/prepared-signature.js';
import { digest, type DigestAlgorithm } from '../../pki/algorithms.js';
import { signedBytes } from '../../pdf/writer/signature-placeholder.js';
import { readJson, writeJson } from '../../store/db/json.js';
import type { SigningSessionTable } from '../../store/db/schema.js';
import { authorizeSigning } from '../../core/signing/sign-document.js';
import { afterSignature, commitSignature } from '../../core/signing/signer-change.js';
import { mainFileBytes } from '../../core/changes/new-main-file.js';
import { timestampAuthority } from '../../core/signing/seal.js';
import { getProperties } from '../../core/settings/tenant-settings.js';
import {
  claimVisualFiles,
  loadStampImages,
  resolveVisuals,
  type VisualRequest,
} from '../../core/signing/visual-input.js';
import { findOwnCertificate } from '../../core/identity/user-certificates.js';
import { recipientDrawing } from '../../core/sharing/field-confinement.js';
import { writeTransaction } from '../../store/db/dialect.js';

export type TwoStepProvider = 'internalUsb' | 'internalNfc';
export type TwoStepMode = 'digest' | 'file';
type SessionRow = Selectable<SigningSessionTable>;

/** 410: the session's `sessionExpiration` has passed; start again. */
export class SessionExpired extends AppError {
  readonly statusCode = 410;
  readonly code = 'SESSION_EXPIRED';
}

/** 409: the session was already finished (its signature is in the document). */
export class SessionFinished extends AppError {
  readonly statusCode = 409;
  readonly code = 'SESSION_FINISHED';
}

export interface StartInput extends VisualRequest {
  id: string;
  version: number;
  certificateHash: string;
  signatureProvider: TwoStepProvider;
  digestAlgorithm?: DigestAlgorithm | undefined;
}

export interface StartAnswer {
  files: { digest: string; preparedFile: string }[];
  sessionId: string;
  sessionExpiration: string;
  /** Why the certificate's revocation status could not be checked and signed with it, if so. */
  warnings?: string[];
}

/** B-T adds the TSA's token and chain to the CMS: reserve more room when a TSA is configured. */
const PLACEHOLDER = { plain: 16 * 1024, timestamped: 24 * 1024 };

/**
 * POST /documents/sign/{version}/start/digest and /start/file (spec: Two-step signing session). The
 * signer's visuals are placed and the PDF prepared with the signer's certificate, in one revision; the
 * prepared file is stored and the session row keeps what finishing needs (DESIGN: stateless between
 * requests, so any node finishes it).
 *
 * `digest` mode answers the base64 hash of the DER signed attributes, which the hardware token signs
 * as is. `file` mode answers the hash of the signed byte ranges: a client that builds the CMS itself
 * signs the prepared file entirely and sends it back to /finish/file.
 */
export async function startTwoStep(
  deps: Deps,
  actor: Actor,
  mode: TwoStepMode,
  input: StartInput,
): Promise<StartAnswer> {
  const { doc, share, signerName, placer } = await authorizeSigning(deps, { kind: 'user', actor }, input.id);
  if (doc.version !== input.version) throw new VersionMismatch();
  // A recipient's entries confined to their fields, their answers checked, with the share's read-only
  // fields: the same as a one-step signature draws (core/signing/signer-change.ts), required fields included.
  const asked = { signatures: input.signatures, images: input.images, annotations: input.annotations };
  const request = share ? await recipientDrawing(deps.db, share, asked, { fieldTexts: true }) : asked;
  const certificate = await findOwnCertificate(deps, actor, input.certificateHash);
  const now = deps.clock.now();
  if (new Date(certificate.not_after) < now || new Date(certificate.not_before) > now) {
    throw new ValidationError('certificateHash', 'names a certificate that is not valid now');
  }
  const signerCertificate = Buffer.from(certificate.certificate, 'base64');
  const signerChain = readJson<string[]>(certificate.chain, []).map((der) => Buffer.from(der, 'base64'));
  // Issue 38: as before the organisation key signs, the certificate's status is asked for first,
  // outside any transaction. A revoked one never prepares a signature; the answers that prove it
  // good are signed with it (adbe-revocationInfoArchival), so the file proves its status.
  const signerStatus = await statusBeforeSigning(deps, certificateChain(signerCertificate, signerChain), now);
  const { file: previous, bytes } = await mainFileBytes(deps, doc);
  const stamps = await loadStampImages(deps, actor, request.signatures);
  const sessionId = `tss_${randomBytes(24).toString('base64url')}`;
  const expiresAt = new Date(now.getTime() + deps.config.twoStepSessionSeconds * 1000);

  return writeTransaction(deps.db, deps.dialect, async (trx) => {
    const { visuals, claims } = await resolveVisuals(trx, deps, {
      stamps,
      placer,
      request,
      document: { id: doc.id, title: doc.title, barcodeFileId: doc.barcode_file_id },
      now,
    });
    await claimVisualFiles(trx, claims, now);
    const prepared = await prepareSignature({
      pdf: bytes,
      certificate: signerCertificate,
      chain: signerChain,
      signerName,
      signingTime: now,
      digestAlgorithm: input.digestAlgorithm ?? 'SHA-256',
      placeholderSize:
        (deps.config.tsaUrl ? PLACEHOLDER.timestamped : PLACEHOLDER.plain) +
        archivedRevocationBytes(signerStatus),
      revocation: signerStatus,
      ...visuals,
    });
    const file = await deps.files.save(
      Buffer.from(prepared.pdf),
      {
        tenantId: actor.tenantId,
        organizationId: doc.organization_id,
        ownerId: actor.userId,
        name: previous.name,
        mimetype: 'application/pdf',
        kind: 'prepared',
      },
      now,
      trx,
    );
    // The prepared file belongs to the session: no other request may use it as an upload.
    await trx
      .updateTable('files')
      .set({ used_by: `signing-session:${sessionId}`, used_at: now.toISOString(), pages: previous.pages })
      .where('id', '=', file.id)
      .execute();
    await trx
      .insertInto('signing_sessions')
      .values({
        id: sessionId,
        tenant_id: actor.tenantId,
        user_id: actor.userId,
        document_id: doc.id,
        document_version: doc.version,
        certificate_hash: certificate.hash,
        provider: input.signatureProvider,
        mode,
        prepared_file_id: file.id,
        state: writeJson(preparedStateToJson(prepared.state)),
        expires_at: expiresAt.toISOString(),
        finished_at: null,
        created_at: now.toISOString(),
      })
      .execute();
    const digest =
      mode === 'digest' ? prepared.state.digest : messageDigestOfState(prepared.state, prepared.pdf);
    return {
      files: [{ digest: Buffer.from(digest).toString('base64'), preparedFile: file.id }],
      sessionId,
      sessionExpiration: expiresAt.toISOString(),
      ...(signerStatus.warnings.length + prepared.warnings.length > 0
        ? { warnings: [...signerStatus.warnings, ...prepared.warnings] }
        : {}),
    };
  });
}

/**
 * The status of a user's certificate before it signs: a revoked one is the caller's error (400 on
 * `certificateHash`: that certificate signs nothing), not the installation's.
 */
async function statusBeforeSigning(deps: Deps, chain: Uint8Array[], now: Date): Promise<SignerStatus> {
  try {
    return await deps.revocation.beforeSigning(chain, now);
  } catch (error) {
    if (!(error instanceof SealCertificateRevoked)) throw error;
    throw new ValidationError(
      'certificateHash',
      `names a revoked certificate: ${error.message.replace(/^The signing key's certificate /, '')}`,
    );
  }
}

export interface FinishAnswer {
  status: 'ok';
  documentId: string;
  _version: number;
  levelAchieved: 'B-B' | 'B-T';
  fellBack: boolean;
  shareStateName: string | null;
}

/**
 * PUT /documents/sign/finish/digest: the hardware token's raw signature over the digest this session
 * handed out (`originalDigest` names it). The value is checked against the certificate before it is
 * embedded; the document gets the signed file as its next main file (B-T when TSA_URL is set).
 */
export async function finishTwoStepDigest(
  deps: Deps,
  actor: Actor,
  input: { sessionId: string; signedDigests: { originalDigest: string; signedDigest: string }[] },
): Promise<FinishAnswer> {
  const session = await openSession(deps, actor, input.sessionId);
  const state = stateOf(session);
  const expected = Buffer.from(state.digest).toString('base64');
  const index = input.signedDigests.findIndex((d) => sameBase64(d.originalDigest, expected));
  if (index < 0) {
    throw new ValidationError(
      'signedDigests',
      'has no entry whose "originalDigest" is the digest of this session',
    );
  }
  const entry = input.signedDigests[index];
  const signatureValue = entry
    ? decodeBase64(entry.signedDigest, `signedDigests[${index}].signedDigest`)
    : null;
  if (!signatureValue) throw new ValidationError('signedDigests', 'is empty');
  const prepared = await preparedBytes(deps, session);
  const finished = await finishSignature({
    pdf: prepared,
    prepared: state,
    signatureValue,
    ...(deps.config.tsaUrl
      ? { timestamp: { ...timestampAuthority(deps, deps.config.tsaUrl), onFailure: 'fallback' as const } }
      : {}),
  });
  return commitSession(deps, actor, session, finished.pdf, {
    levelAchieved: finished.timestamped ? 'B-T' : 'B-B',
    fellBack: finished.fellBack,
  });
}

/**
 * PUT /documents/sign/finish/file (multipart `sessionId` + `file`): the prepared file with its
 * signature filled in by the client, accepted only when nothing but /Contents differs (DESIGN) and
 * the CMS there verifies with the session's certificate.
 */
export async function finishTwoStepFile(
  deps: Deps,
  actor: Actor,
  input: { sessionId: string; file: Uint8Array },
): Promise<FinishAnswer> {
  const session = await openSession(deps, actor, input.sessionId);
  const state = stateOf(session);
  const prepared = await preparedBytes(deps, session);
  const signed = finishSignatureFromFile({ prepared, state, signed: input.file });
  return commitSession(deps, actor, session, signed, { levelAchieved: 'B-B', fellBack: false });
}

async function commitSession(
  deps: Deps,
  actor: Actor,
  session: SessionRow,
  signedPdf: Uint8Array,
  outcome: { levelAchieved: 'B-B' | 'B-T'; fellBack: boolean },
): Promise<FinishAnswer> {
  const { doc, share, by } = await authorizeSigning(deps, { kind: 'user', actor }, session.document_id);
  if (doc.version !== session.document_version) throw new VersionMismatch();
  const { file: previous } = await mainFileBytes(deps, doc);
  const properties = await getProperties(deps, { tenantId: doc.tenant_id });
  const now = deps.clock.now();
  const updated = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    // Finishing is a compare-and-set on the session too: of two concurrent finishes, one wins.
    const closed = await trx
      .updateTable('signing_sessions')
      .set({ finished_at: now.toISOString() })
      .where('id', '=', session.id)
      .where('finished_at', 'is', null)
      .executeTakeFirst();
    if (Number(closed.numUpdatedRows) === 0)
      throw new SessionFinished('This signing session is already finished');
    return commitSignature(trx, deps, {
      doc,
      share,
      by,
      previous,
      bytes: signedPdf,
      expectedVersion: session.document_version,
      data: {
        ...outcome,
        twoStep: { sessionId: session.id, provider: session.provider, certificate: session.certificate_hash },
      },
      sealOnComplete: properties.sealOnComplete,
      now,
    });
  });
  const shareStateName = await afterSignature(deps, doc, updated, by, properties.sealOnComplete);
  return {
    status: 'ok',
    documentId: updated.id,
    _version: updated.version,
    ...outcome,
    shareStateName,
  };
}

/** The caller's session: another user's is "not found"; a finished or expired one is refused. */
async function openSession(deps: Deps, actor: Actor, sessionId: string): Promise<SessionRow> {
  const session = await deps.db
    .selectFrom('signing_sessions')
    .selectAll()
    .where('id', '=', sessionId)
    .where('tenant_id', '=', actor.tenantId)
    .where('user_id', '=', actor.userId)
    .executeTakeFirst();
  if (!session) throw new NotFound('No such signing session');
  if (session.finished_at) throw new SessionFinished('This signing session is already finished');
  if (new Date(session.expires_at) <= deps.clock.now()) {
    throw new SessionExpired('This signing session has expired; start a new one');
  }
  const certificate = await deps.db
    .selectFrom('user_certificates')
    .select('id')
    .where('user_id', '=', actor.userId)
    .where('hash', '=', session.certificate_hash)
    .executeTakeFirst();
  if (!certificate) {
    throw new ValidationError('The certificate of this signing session has been deleted; start a new one');
  }
  return session;
}

function stateOf(session: SessionRow): PreparedSignatureState {
  return preparedStateFromJson(
    readJson<PreparedSignatureStateJson>(session.state, {} as PreparedSignatureStateJson),
  );
}

async function preparedBytes(deps: Deps, session: SessionRow): Promise<Uint8Array> {
  const file = await deps.files.find(session.tenant_id, session.prepared_file_id);
  if (!file) throw new NotFound('The prepared file of this session is gone');
  return new Uint8Array(await deps.files.read(file));
}

/** The digest of the signed byte ranges (what a whole-file signer puts in its message-digest). */
function messageDigestOfState(state: PreparedSignatureState, pdf: Uint8Array): Uint8Array {
  return digest(state.digestAlgorithm, signedBytes(pdf, state.byteRange));
}

function decodeBase64(text: string, field: string): Uint8Array {
  const compact = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(compact) || compact.length < 8) {
    throw new ValidationError(`${field}`, 'must be base64');
  }
  return new Uint8Array(Buffer.from(compact.replace(/-/g, '+').replace(/_/g, '/'), 'base64'));
}

function sameBase64(a: string, b: string): boolean {
  const normal = (s: string): string =>
    Buffer.from(s.replace(/\s+/g, '').replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('hex');
  return normal(a) === normal(b);
}
