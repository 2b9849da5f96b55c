import { bytesEqual, concatBytes } from '../der.js';
import { digest } from '../algorithms.js';
import { signatureMatches } from '../verify-signature-value.js';
import type { SignedDataContents } from './read-signed-data.js';

export interface VerifySignedDataOptions {
  cms: SignedDataContents;
  /** The signed content: a PDF's byte ranges (in parts), or the token's own eContent. */
  content: Uint8Array | Uint8Array[];
  /** More certificates to look for the signer in (a PDF's DSS). */
  extraCertificates?: Uint8Array[];
}

export interface SignedDataVerification {
  /** The message-digest attribute equals the digest of the content. */
  digestMatches: boolean;
  /** The signature value verifies over the signed attributes with the signer's public key. */
  signatureValid: boolean;
  /** signing-certificate(-v2) names the signer's certificate (or is absent). */
  signingCertificateMatches: boolean;
  signerCertificate?: Uint8Array;
  problems: string[];
}

/**
 * Checks a SignerInfo against its content: the digest, then the signature value. A signer named by
 * key identifier rather than issuer and serial is found by trying the certificates at hand.
 *
 * ```ts
 * const check = verifySignedData({ cms, content: signedBytes });
 * ```
 */
export function verifySignedData(options: VerifySignedDataOptions): SignedDataVerification {
  const { cms } = options;
  const problems: string[] = [];
  const algorithm = cms.digestAlgorithm;
  let digestMatches = false;
  let signedData: Uint8Array;
  if (!algorithm) {
    problems.push(`Unsupported digest algorithm ${cms.digestAlgorithmOid}`);
    return { digestMatches, signatureValid: false, signingCertificateMatches: false, problems };
  }
  const parts = options.content instanceof Uint8Array ? [options.content] : options.content;
  const contentDigest = digest(algorithm, ...parts);
  if (cms.signedAttributes) {
    digestMatches = cms.messageDigest !== undefined && bytesEqual(cms.messageDigest, contentDigest);
    if (!digestMatches) problems.push('The message digest does not match the signed content');
    signedData = cms.signedAttributes;
  } else {
    // Without signed attributes the signature covers the content itself (old PKCS#7 signatures).
    digestMatches = true;
    signedData = parts.length === 1 ? parts[0]! : concatBytes(...parts);
  }
  const candidates = cms.signerCertificate
    ? [cms.signerCertificate]
    : [...cms.certificates, ...(options.extraCertificates ?? [])];
  const signerCertificate = candidates.find((certificate) =>
    signatureMatches({
      certificate,
      data: signedData,
      signature: cms.signatureValue,
      signatureAlgorithmOid: cms.signatureAlgorithmOid,
      digestAlgorithm: algorithm,
      parameters: cms.signatureAlgorithmParameters,
    }),
  );
  if (!signerCertificate) {
    problems.push(
      cms.signerCertificate || candidates.length > 0
        ? 'The signature value does not verify with the signer certificate'
        : 'The signer certificate is not included',
    );
  }
  const signer = signerCertificate ?? cms.signerCertificate;
  let signingCertificateMatches = true;
  if (signer && cms.signingCertificateHashes.length > 0) {
    signingCertificateMatches = cms.signingCertificateHashes.some((entry) =>
      bytesEqual(entry.hash, digest(entry.algorithm, signer)),
    );
    if (!signingCertificateMatches) problems.push('signing-certificate attribute names another certificate');
  }
  return {
    digestMatches,
    signatureValid: signerCertificate !== undefined,
    signingCertificateMatches,
    signerCertificate: signer,
    problems,
  };
}
