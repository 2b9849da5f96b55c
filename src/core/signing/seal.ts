import type { Kysely } from 'kysely';
import type { Actor } from '../access/actor.js';
import type { Deps } from '../deps.js';
import type { Hash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { FileToEmbed } from '../../pdf/embedded-files.js';
import { certificateChain } from '../../pdf/archive-timestamp.js';
import type { TsaOptions } from '../../pdf/finish-signature.js';
import { fileSource, withKnownPrefix } from '../../pdf/reader/byte-source.js';
import {
  signPdf,
  signPdfUpdate,
  type PadesLevel,
  type SignedUpdate,
  type SignPdfOptions,
  type SignPdfResult,
} from '../../pdf/sign-pdf.js';
import type { SignatureOperation } from '../metrics.js';
import type { ResolvedVisuals } from './visual-input.js';
import { getProperties } from '../settings/tenant-settings.js';
import type { Database } from '../../store/db/schema.js';
import { READ_WHOLE_MAX_BYTES } from '../files/stored-pdf.js';
import type { FileRecord, StoredBytes } from '../../store/files/file-store.js';

/** The level a call gets unless it asks: B-T with a TSA configured, else B-B (DESIGN). */
export function defaultLevel(deps: Deps): PadesLevel {
  return deps.config.tsaUrl ? 'B-T' : 'B-B';
}

/**
 * The level of a sign or seal call that names none: the tenant property `defaultPadesLevel` when set,
 * else `defaultLevel`. A level needing a TSA is refused when the property is set without one (PUT
 * /settings/properties); should TSA_URL be removed afterwards, the call signs at B-B and says so.
 */
export async function tenantDefaultLevel(deps: Deps, tenantId: string): Promise<PadesLevel> {
  return (await getProperties(deps, { tenantId })).defaultPadesLevel ?? defaultLevel(deps);
}

/** What a seal is asked for, whatever holds the file. */
export interface SealOptions {
  operation: SignatureOperation;
  signerName: string;
  level: PadesLevel;
  visuals?: ResolvedVisuals;
  reason?: string;
  /** The `signatureProvider` whose key signs; by default the installation's (SEAL_PROVIDER). */
  provider?: string | undefined;
  /** Files the seal carries in its own revision and covers (the audit trail of a completed document). */
  associatedFiles?: FileToEmbed[];
}

/**
 * Signs bytes with the organisation key (or the provider's) on behalf of `signerName`. A failing TSA, or revocation data
 * that cannot be had for B-LT, falls back and says so; a revoked certificate fails the call, checked
 * before the key signs at any level (SEAL_CERTIFICATE_REVOKED).
 * `operation` names the signature in the metrics: an organisation `seal`, or a `sign` call's.
 */
export function sealBytes(deps: Deps, options: SealOptions & { pdf: Uint8Array }): Promise<SignPdfResult> {
  return sealWith(deps, options, (parameters) => signPdf({ ...parameters, pdf: options.pdf }));
}

/**
 * A seal of a stored file, and the next main file it makes: held in memory when the file is small
 * (read whole, its blob written while the caller's transaction runs: the quickest for the files most
 * documents are), else signed from the stored file where it lies (read lazily) and copied by the blob
 * store (FileStore.storeExtended: the original, then the seal's revisions), so memory stays flat
 * whatever the size (issue 26: a 1 GB PDF). The copy runs while the file is signed, its revisions
 * written last; the file is read once, by the copy, whose SHA-256 of the original is where the
 * signature's byte-range digest starts, while its SHA-512 is computed on a worker thread. The caller
 * makes it the main file in its transaction (replaceMainFile, with `next`).
 *
 * ```ts
 * const { sealed, next } = await sealStoredFile(deps, { operation: 'seal', file, signerName, level });
 * ```
 */
export async function sealStoredFile(
  deps: Deps,
  options: SealOptions & { file: FileRecord },
): Promise<{ sealed: SignedUpdate; next: Uint8Array | StoredBytes }> {
  const { file } = options;
  if (file.size <= READ_WHOLE_MAX_BYTES) {
    const sealed = await sealBytes(deps, { ...options, pdf: new Uint8Array(await deps.files.read(file)) });
    return { sealed, next: sealed.pdf };
  }
  const local = await deps.files.openFile(file);
  let appended!: { resolve: (bytes: Uint8Array) => void; reject: (error: unknown) => void };
  const revisions = new Promise<Uint8Array>((resolve, reject) => (appended = { resolve, reject }));
  // Rejected when the signature fails, maybe before the copy reaches it: not an unhandled rejection.
  revisions.catch(() => undefined);
  // The copy's SHA-256 of the original is where the signature's byte-range digest starts: the file is
  // read and hashed once for both (it ends where the seal's revisions begin).
  let original!: (state: Hash) => void;
  const originalHashed = new Promise<Hash>((resolve) => (original = resolve));
  const storing = deps.files.storeExtended(file, revisions, {
    prefixHash: { bytes: local.size, take: original },
    baseFile: local,
  });
  // Awaited below, after the signature: a failure meanwhile must not count as unhandled.
  storing.catch(() => undefined);
  // A copy that fails before the end of the original fails the signature waiting for its digest.
  const state = Promise.race([originalHashed, storing.then(() => originalHashed)]);
  state.catch(() => undefined);
  try {
    const source = withKnownPrefix(fileSource(local.fd, local.size), {
      algorithm: 'sha256',
      bytes: local.size,
      state,
    });
    const sealed = await sealWith(deps, options, (parameters) =>
      signPdfUpdate({ ...parameters, pdf: source }),
    );
    appended.resolve(sealed.appended);
    return { sealed, next: await storing };
  } catch (error) {
    // The copy stops with the signature: a put that fails leaves no blob.
    appended.reject(error);
    await storing.catch(() => undefined);
    throw error;
  } finally {
    await local.close();
  }
}

/** One seal: the signer of `provider`, the TSA and revocation of the installation, the metrics. */
async function sealWith<T>(
  deps: Deps,
  options: SealOptions,
  sign: (parameters: Omit<SignPdfOptions, 'pdf'>) => Promise<T>,
): Promise<T> {
  const started = performance.now();
  const signer = await (await deps.seal()).signerFor(options.provider);
  // Issue 38: the key's certificate is checked before it signs (revoked: SealCertificateRevoked, and
  // nothing is signed); what proved it good is signed into the CMS, and a responder that could not be
  // reached is said in the answer's warnings.
  const signerStatus = await deps.revocation.beforeSigning(
    certificateChain(signer.certificate, signer.chain),
    deps.clock.now(),
  );
  const signed = await sign({
    signer,
    signerStatus,
    signerName: options.signerName,
    signingTime: deps.clock.now(),
    level: options.level,
    ...(deps.config.tsaUrl ? { tsa: timestampAuthority(deps, deps.config.tsaUrl) } : {}),
    onTimestampFailure: 'fallback',
    revocation: (chains, now) => deps.revocation.collect(chains, now),
    ...(options.reason ? { reason: options.reason } : {}),
    ...(options.associatedFiles ? { associatedFiles: options.associatedFiles } : {}),
    ...(options.visuals ?? {}),
  });
  deps.metrics.signatureMade(options.operation, options.level, (performance.now() - started) / 1000);
  return signed;
}

/** The TSA (TSA_URL) as signatures use it: its requests counted in the metrics. */
export function timestampAuthority(deps: Pick<Deps, 'metrics'>, url: string): TsaOptions {
  return { url, observe: deps.metrics.observeTsa };
}

/** The name a user's signatures carry in the signature dictionary: their display name, else login name. */
export async function userSignerName(db: Kysely<Database>, actor: Pick<Actor, 'userId'>): Promise<string> {
  const user = await db
    .selectFrom('users')
    .select(['display_name', 'name'])
    .where('id', '=', actor.userId)
    .executeTakeFirstOrThrow();
  return user.display_name ?? user.name;
}
