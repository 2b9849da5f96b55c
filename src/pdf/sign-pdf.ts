import type { DigestAlgorithm } from '../pki/algorithms.js';
import { certificateFields } from '../pki/certificate-fields.js';
import { RevocationUnavailable, TimestampUnavailable } from '../pki/errors.js';
import type { ValidationMaterial } from '../pki/revocation-fetcher.js';
import type { Signer } from '../pki/signers/signer.js';
import { validationDataUpdate } from './add-validation-data.js';
import {
  archiveTimestamp,
  certificateChain,
  validationMaterial,
  type ArchiveExpiry,
} from './archive-timestamp.js';
import type { FileToEmbed } from './embedded-files.js';
import { signatureContents, type TsaOptions } from './finish-signature.js';
import { prepareSignatureUpdate } from './prepare-signature.js';
import { appendedSource, memorySource, type ByteSource } from './reader/byte-source.js';
import type { ImageVisual, SignatureVisual, TextAnnotation } from './visuals/visual-types.js';
import { embedInUpdate } from './writer/signature-placeholder.js';

/** PAdES baseline levels (ETSI EN 319 142-1). */
export type PadesLevel = 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';

export interface SignPdfOptions {
  pdf: Uint8Array;
  signer: Signer;
  /** /Name of the signature (default: the certificate's common name). */
  signerName?: string;
  /** Claimed signing time, /M (default: now). */
  signingTime?: Date;
  reason?: string;
  location?: string;
  contactInfo?: string;
  digestAlgorithm?: DigestAlgorithm;
  /** Default B-B. B-T and above need `tsa`. */
  level?: PadesLevel;
  tsa?: TsaOptions;
  /**
   * When the TSA fails: `fail` (default) throws `TimestampUnavailable`; `fallback` signs at the best
   * level reached without it and reports `fellBack` and `reason` (DESIGN: never a fake timestamp).
   */
  onTimestampFailure?: 'fail' | 'fallback';
  /**
   * Revocation data for B-LT/B-LTA (CRLs, OCSP responses) and extra certificates, given by the caller
   * (a CRL of the dev CA's `issueCrl()`, responses fetched beforehand).
   */
  validationData?: { certificates?: Uint8Array[]; crls?: Uint8Array[]; ocsps?: Uint8Array[] };
  /**
   * Fetches the revocation data of the given chains (each leaf first, ending at its root), after the
   * signature timestamp: RevocationFetcher.collect. Throws `RevocationUnavailable` (the level falls
   * back to B-T, or the call fails without `fallback`) or `CertificateRevoked` (the call fails).
   */
  revocation?: (chains: Uint8Array[][], now: Date) => Promise<ValidationMaterial>;
  /**
   * The signer's revocation status as checked right before signing (RevocationFetcher.beforeSigning):
   * its CRLs and OCSP answers are signed into the CMS (adbe-revocationInfoArchival, the placeholder
   * grown to hold them), and `warnings` (a responder that could not be reached) go to the result.
   */
  signerStatus?: { crls: Uint8Array[]; ocsps: Uint8Array[]; warnings: string[] };
  signatures?: SignatureVisual[];
  images?: ImageVisual[];
  annotations?: TextAnnotation[];
  placeholderSize?: number;
  /** Files the signature carries on its appearance and covers (PrepareSignatureOptions). */
  associatedFiles?: FileToEmbed[];
}

export interface SignPdfResult extends SignedUpdate {
  /** The signed file: the original, then `appended`. */
  pdf: Uint8Array;
}

/** What signing did to a file, without the file: the bytes its revisions append to it. */
export interface SignedUpdate {
  /** The incremental updates (the signature's revision, and at B-LT and B-LTA the ones after it). */
  appended: Uint8Array;
  fieldName: string;
  levelRequested: PadesLevel;
  levelAchieved: PadesLevel;
  /** The requested level was not reached because the TSA failed. */
  fellBack: boolean;
  reason?: string;
  /** Things a validator will hold against the result. */
  warnings: string[];
  /** At B-LTA: the archive timestamp, and until when it proves the file (renew before then). */
  archive?: ArchiveExpiry;
}

const PLACEHOLDER: Record<PadesLevel, number> = {
  'B-B': 16 * 1024,
  'B-T': 24 * 1024,
  'B-LT': 32 * 1024,
  'B-LTA': 32 * 1024,
};

/** Room the signer's archived revocation data takes in the CMS (with a margin for its DER framing). */
export function archivedRevocationBytes(status: SignPdfOptions['signerStatus']): number {
  if (!status) return 0;
  const total = [...status.crls, ...status.ocsps].reduce((sum, der) => sum + der.length, 0);
  return total === 0 ? 0 : total + 64;
}

/**
 * Signs a PDF in one call: prepare (visuals and placeholder in one incremental update), sign the
 * signed attributes with `signer`, finish (optionally with a signature timestamp), then for B-LT a
 * DSS revision and for B-LTA a document timestamp after it.
 *
 * ```ts
 * const { pdf: sealed, levelAchieved } = await signPdf({ pdf, signer: devCa.sealSigner, level: 'B-T',
 *   tsa: { url: config.tsaUrl }, onTimestampFailure: 'fallback' });
 * ```
 */
export async function signPdf(options: SignPdfOptions): Promise<SignPdfResult> {
  const signed = await signPdfUpdate({ ...options, pdf: memorySource(options.pdf) });
  return { ...signed, pdf: new Uint8Array(Buffer.concat([options.pdf, signed.appended])) };
}

/**
 * `signPdf` on a file read where it is (a stored file on disk, say): it is read lazily, its byte
 * ranges hashed as they are read, and never held whole; answers what the signature's revisions append
 * to it. Memory stays flat whatever the file's size.
 *
 * ```ts
 * const { appended } = await signPdfUpdate({ pdf: fileSource(handle.fd, size), signer });
 * ```
 */
export async function signPdfUpdate(
  options: Omit<SignPdfOptions, 'pdf'> & { pdf: ByteSource },
): Promise<SignedUpdate> {
  const levelRequested = options.level ?? 'B-B';
  const digestAlgorithm = options.digestAlgorithm ?? 'SHA-256';
  const wantsTimestamp = levelRequested !== 'B-B';
  if (wantsTimestamp && !options.tsa) {
    if (options.onTimestampFailure !== 'fallback') {
      throw new TimestampUnavailable(
        `PAdES ${levelRequested} needs a time-stamp authority and none is configured`,
      );
    }
  }
  const { signer } = options;
  const prepared = await prepareSignatureUpdate({
    pdf: options.pdf,
    certificate: signer.certificate,
    chain: signer.chain,
    signerName: options.signerName ?? certificateFields(signer.certificate).commonName,
    signingTime: options.signingTime ?? new Date(),
    reason: options.reason,
    location: options.location,
    contactInfo: options.contactInfo,
    digestAlgorithm,
    signatures: options.signatures,
    images: options.images,
    annotations: options.annotations,
    placeholderSize:
      (options.placeholderSize ?? PLACEHOLDER[levelRequested]) +
      archivedRevocationBytes(options.signerStatus),
    ...(options.signerStatus ? { revocation: options.signerStatus } : {}),
    ...(options.associatedFiles ? { associatedFiles: options.associatedFiles } : {}),
  });
  const signatureValue = await signer.sign({ data: prepared.state.signedAttributes, digestAlgorithm });
  const fallback = options.onTimestampFailure === 'fallback';
  const finished = await signatureContents({
    prepared: prepared.state,
    signatureValue,
    ...(wantsTimestamp && options.tsa
      ? { timestamp: { ...options.tsa, onFailure: options.onTimestampFailure } }
      : {}),
  });
  embedInUpdate({ written: prepared.written, byteRange: prepared.state.byteRange, der: finished.cms });
  const signed = prepared.written.tail;
  const warnings: string[] = [...(options.signerStatus?.warnings ?? []), ...prepared.warnings];
  const result = (appended: Uint8Array, levelAchieved: PadesLevel, reason?: string): SignedUpdate => ({
    appended,
    fieldName: prepared.state.fieldName,
    levelRequested,
    levelAchieved,
    fellBack: levelAchieved !== levelRequested,
    ...(reason ? { reason } : {}),
    warnings,
  });
  if (!wantsTimestamp) return result(signed, 'B-B');
  if (!finished.timestamped) {
    return result(signed, 'B-B', finished.reason ?? 'No time-stamp authority is configured');
  }
  if (levelRequested === 'B-T') return result(signed, 'B-T');

  // A level is claimed only with its evidence in the file (issue 23): revocation data proving every
  // certificate of the signer's and the timestamp's chains good, or the level stays B-T.
  const now = new Date();
  let material: ValidationMaterial;
  try {
    if (!finished.timestampCertificate)
      throw new RevocationUnavailable('The signature timestamp names no TSA certificate');
    const chains = [
      certificateChain(signer.certificate, signer.chain),
      certificateChain(finished.timestampCertificate, finished.timestampCertificates),
    ];
    material = await validationMaterial(chains, options, now);
  } catch (error) {
    if (!(error instanceof RevocationUnavailable) || !fallback) throw error;
    return result(signed, 'B-T', error.message);
  }
  const dss = await validationDataUpdate({
    pdf: appendedSource(options.pdf, signed),
    ...material,
    vriFor: [finished.cms],
  });
  const withDss = Buffer.concat([signed, dss.tail]);
  if (levelRequested === 'B-LT') return result(withDss, 'B-LT');
  try {
    const archived = await archiveTimestamp(appendedSource(options.pdf, withDss), material, {
      ...options,
      tsa: options.tsa!,
      digestAlgorithm,
      now,
    });
    return { ...result(Buffer.concat([withDss, archived.appended]), 'B-LTA'), archive: archived.archive };
  } catch (error) {
    if (!(error instanceof TimestampUnavailable || error instanceof RevocationUnavailable) || !fallback)
      throw error;
    return result(withDss, 'B-LT', error.message);
  }
}
