import { digest } from '../pki/algorithms.js';
import { buildSignedData } from '../pki/cms/signed-data.js';
import { messageDigestOf } from '../pki/cms/signed-attributes.js';
import { bytesEqual } from '../pki/der.js';
import { TimestampUnavailable } from '../pki/errors.js';
import { requestTimestamp, type TsaObserver } from '../pki/tsa-client.js';
import { verifySignatureValue } from '../pki/verify-signature-value.js';
import { PreparedSignatureMismatch } from './errors.js';
import type { PreparedSignatureState } from './prepared-signature.js';
import { memorySource } from './reader/byte-source.js';
import { byteRangeDigest, embedContents } from './writer/signature-placeholder.js';

export interface TsaOptions {
  /** RFC 3161 endpoint (TSA_URL). */
  url: string;
  timeoutMs?: number;
  headers?: Record<string, string>;
  /** Hears each request to the TSA (metrics). */
  observe?: TsaObserver | undefined;
}

export interface FinishSignatureOptions {
  /** The prepared PDF, byte for byte as `prepareSignature` returned it. */
  pdf: Uint8Array;
  prepared: PreparedSignatureState;
  /** Raw signature over `prepared.signedAttributes`: RSA PKCS#1 v1.5 or ECDSA (DER; r||s accepted). */
  signatureValue: Uint8Array;
  /**
   * Timestamp the signature value (PAdES B-T). On TSA failure, `fail` (default) throws
   * `TimestampUnavailable`; `fallback` finishes without a timestamp and says so in the result.
   */
  timestamp?: TsaOptions & { onFailure?: 'fail' | 'fallback' };
}

export interface FinishedSignature extends SignatureContents {
  pdf: Uint8Array;
}

/** What goes into a prepared signature's /Contents, and what the TSA said. */
export interface SignatureContents {
  /** The CMS to embed (DER). */
  cms: Uint8Array;
  timestamped: boolean;
  /** A timestamp was asked for, the TSA failed and the signature was finished without one. */
  fellBack: boolean;
  reason?: string;
  /** Certificates of the TSA, for the DSS of B-LT. */
  timestampCertificates: Uint8Array[];
  /** The certificate that signed the timestamp token (its chain's revocation is proved for B-LT). */
  timestampCertificate?: Uint8Array;
}

/**
 * Second half of signing: checks the prepared file still matches its state (same signed bytes), checks
 * the signature value against the certificate (throws `SignatureValueInvalid` before embedding),
 * optionally timestamps it (B-T; DESIGN: never a fake timestamp), builds the CMS with pkijs and writes
 * it into the placeholder. No byte outside /Contents changes.
 *
 * ```ts
 * const { pdf } = await finishSignature({ pdf: preparedPdf, prepared: state, signatureValue });
 * ```
 */
export async function finishSignature(options: FinishSignatureOptions): Promise<FinishedSignature> {
  const { prepared, pdf } = options;
  const [, , offset2, length2] = prepared.byteRange;
  if (pdf.length !== offset2 + length2) {
    throw new PreparedSignatureMismatch('The PDF is not the prepared file of this signature');
  }
  if (
    !bytesEqual(
      expectedDigest(prepared.signedAttributes),
      await byteRangeDigest(prepared.digestAlgorithm, memorySource(pdf), prepared.byteRange),
    )
  ) {
    throw new PreparedSignatureMismatch(
      'The PDF is not the prepared file of this signature (its content differs)',
    );
  }
  const contents = await signatureContents(options);
  return { ...contents, pdf: embedContents({ pdf, byteRange: prepared.byteRange, der: contents.cms }) };
}

/**
 * What `finishSignature` embeds, without the file: the signature value checked against the
 * certificate (`SignatureValueInvalid`), the optional signature timestamp, the CMS. For a caller that
 * holds the prepared update itself (signPdf), so the file is neither hashed again nor copied.
 *
 * ```ts
 * const { cms } = await signatureContents({ prepared: state, signatureValue });
 * embedInUpdate({ written, byteRange: state.byteRange, der: cms });
 * ```
 */
export async function signatureContents(
  options: Omit<FinishSignatureOptions, 'pdf'>,
): Promise<SignatureContents> {
  const { prepared } = options;
  const signatureValue = verifySignatureValue({
    certificate: prepared.certificate,
    data: prepared.signedAttributes,
    signature: options.signatureValue,
    digestAlgorithm: prepared.digestAlgorithm,
  });

  let timestampToken: Uint8Array | undefined;
  let timestampCertificates: Uint8Array[] = [];
  let timestampCertificate: Uint8Array | undefined;
  let reason: string | undefined;
  if (options.timestamp) {
    try {
      const result = await requestTimestamp({
        url: options.timestamp.url,
        timeoutMs: options.timestamp.timeoutMs,
        headers: options.timestamp.headers,
        observe: options.timestamp.observe,
        // CAdES signature-time-stamp: the imprint is the hash of the signature value (EN 319 122-1 5.3).
        digest: digest(prepared.digestAlgorithm, signatureValue),
        digestAlgorithm: prepared.digestAlgorithm,
      });
      timestampToken = result.token;
      timestampCertificates = result.info.certificates;
      timestampCertificate = result.info.tsaCertificate;
    } catch (error) {
      if (!(error instanceof TimestampUnavailable) || options.timestamp.onFailure !== 'fallback') throw error;
      reason = error.message;
    }
  }

  const cms = buildSignedData({
    signedAttributes: prepared.signedAttributes,
    signatureValue,
    certificate: prepared.certificate,
    chain: prepared.chain,
    digestAlgorithm: prepared.digestAlgorithm,
    keyAlgorithm: prepared.keyAlgorithm,
    timestampToken,
  });
  return {
    cms,
    timestamped: timestampToken !== undefined,
    fellBack: options.timestamp !== undefined && timestampToken === undefined,
    reason,
    timestampCertificates,
    ...(timestampCertificate ? { timestampCertificate } : {}),
  };
}

function expectedDigest(signedAttributes: Uint8Array): Uint8Array {
  const value = messageDigestOf(signedAttributes);
  if (!value) throw new PreparedSignatureMismatch('The signed attributes have no message digest');
  return value;
}
