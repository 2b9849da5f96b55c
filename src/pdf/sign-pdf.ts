import type { DigestAlgorithm } from '../pki/algorithms.js';
import { certificateFields } from '../pki/certificate-fields.js';
import { TimestampUnavailable } from '../pki/errors.js';
import type { Signer } from '../pki/signers/signer.js';
import { addDocumentTimestamp } from './add-document-timestamp.js';
import { addValidationData } from './add-validation-data.js';
import { finishSignature, type TsaOptions } from './finish-signature.js';
import { prepareSignature } from './prepare-signature.js';
import type { ImageVisual, SignatureVisual, TextAnnotation } from './visuals/visual-types.js';

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
   * Revocation data for B-LT/B-LTA (CRLs, OCSP responses) and extra certificates. Put in the DSS as
   * given: the dev CA's `issueCrl()`, or responses fetched by the caller.
   */
  validationData?: { certificates?: Uint8Array[]; crls?: Uint8Array[]; ocsps?: Uint8Array[] };
  signatures?: SignatureVisual[];
  images?: ImageVisual[];
  annotations?: TextAnnotation[];
  placeholderSize?: number;
}

export interface SignPdfResult {
  pdf: Uint8Array;
  fieldName: string;
  levelRequested: PadesLevel;
  levelAchieved: PadesLevel;
  /** The requested level was not reached because the TSA failed. */
  fellBack: boolean;
  reason?: string;
  /** Things a validator will hold against the result (B-LT without revocation data). */
  warnings: string[];
}

const PLACEHOLDER: Record<PadesLevel, number> = {
  'B-B': 16 * 1024,
  'B-T': 24 * 1024,
  'B-LT': 32 * 1024,
  'B-LTA': 32 * 1024,
};

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
  const prepared = await prepareSignature({
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
    placeholderSize: options.placeholderSize ?? PLACEHOLDER[levelRequested],
  });
  const signatureValue = await signer.sign({ data: prepared.state.signedAttributes, digestAlgorithm });
  const fallback = options.onTimestampFailure === 'fallback';
  const finished = await finishSignature({
    pdf: prepared.pdf,
    prepared: prepared.state,
    signatureValue,
    ...(wantsTimestamp && options.tsa
      ? { timestamp: { ...options.tsa, onFailure: options.onTimestampFailure } }
      : {}),
  });
  const warnings: string[] = [];
  const result = (pdf: Uint8Array, levelAchieved: PadesLevel, reason?: string): SignPdfResult => ({
    pdf,
    fieldName: prepared.state.fieldName,
    levelRequested,
    levelAchieved,
    fellBack: levelAchieved !== levelRequested,
    ...(reason ? { reason } : {}),
    warnings,
  });
  if (!wantsTimestamp) return result(finished.pdf, 'B-B');
  if (!finished.timestamped) {
    return result(finished.pdf, 'B-B', finished.reason ?? 'No time-stamp authority is configured');
  }
  if (levelRequested === 'B-T') return result(finished.pdf, 'B-T');

  if (!options.validationData?.crls?.length && !options.validationData?.ocsps?.length) {
    warnings.push('The DSS holds certificates but no revocation data (pass validationData.crls or .ocsps)');
  }
  const withDss = await addValidationData({
    pdf: finished.pdf,
    certificates: [
      signer.certificate,
      ...signer.chain,
      ...finished.timestampCertificates,
      ...(options.validationData?.certificates ?? []),
    ],
    crls: options.validationData?.crls,
    ocsps: options.validationData?.ocsps,
  });
  if (levelRequested === 'B-LT') return result(withDss, 'B-LT');
  try {
    const archived = await addDocumentTimestamp({ pdf: withDss, tsa: options.tsa!, digestAlgorithm });
    return result(archived.pdf, 'B-LTA');
  } catch (error) {
    if (!(error instanceof TimestampUnavailable) || !fallback) throw error;
    return result(withDss, 'B-LT', error.message);
  }
}
