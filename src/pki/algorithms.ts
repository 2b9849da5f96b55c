import { createHash } from 'node:crypto';

/** Digest algorithms a signature may use (DESIGN, two-step signing: SHA-256, SHA-384, SHA-512). */
export type DigestAlgorithm = 'SHA-256' | 'SHA-384' | 'SHA-512';

export const DIGEST_ALGORITHMS: readonly DigestAlgorithm[] = ['SHA-256', 'SHA-384', 'SHA-512'];

/** Object identifiers used across CMS, PAdES and RFC 3161. */
export const OID = {
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  signingCertificate: '1.2.840.113549.1.9.16.2.12',
  signatureTimeStampToken: '1.2.840.113549.1.9.16.2.14',
  /** Adobe's RevocationInfoArchival signed attribute (ISO 32000-1 12.8.3.3.2): CRLs and OCSP answers. */
  adbeRevocationInfoArchival: '1.2.840.113583.1.1.8',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  rsaEncryption: '1.2.840.113549.1.1.1',
  rsassaPss: '1.2.840.113549.1.1.10',
  sha256WithRsa: '1.2.840.113549.1.1.11',
  sha384WithRsa: '1.2.840.113549.1.1.12',
  sha512WithRsa: '1.2.840.113549.1.1.13',
  sha1WithRsa: '1.2.840.113549.1.1.5',
  ecPublicKey: '1.2.840.10045.2.1',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  ecdsaWithSha384: '1.2.840.10045.4.3.3',
  ecdsaWithSha512: '1.2.840.10045.4.3.4',
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha384: '2.16.840.1.101.3.4.2.2',
  sha512: '2.16.840.1.101.3.4.2.3',
  extKeyUsageTimeStamping: '1.3.6.1.5.5.7.3.8',
  ocspBasic: '1.3.6.1.5.5.7.48.1.1',
} as const;

const DIGEST_OIDS: Record<DigestAlgorithm, string> = {
  'SHA-256': OID.sha256,
  'SHA-384': OID.sha384,
  'SHA-512': OID.sha512,
};

/**
 * The OID of a digest algorithm.
 *
 * ```ts
 * digestOid('SHA-256'); // '2.16.840.1.101.3.4.2.1'
 * ```
 */
export function digestOid(algorithm: DigestAlgorithm): string {
  return DIGEST_OIDS[algorithm];
}

/**
 * The digest algorithm of an OID, or undefined for one we do not sign with (SHA-1 is read elsewhere).
 *
 * ```ts
 * digestFromOid('2.16.840.1.101.3.4.2.3'); // 'SHA-512'
 * ```
 */
export function digestFromOid(oid: string): DigestAlgorithm | undefined {
  return DIGEST_ALGORITHMS.find((name) => DIGEST_OIDS[name] === oid);
}

/**
 * Node's name for a digest algorithm.
 *
 * ```ts
 * nodeHashName('SHA-384'); // 'sha384'
 * ```
 */
export function nodeHashName(algorithm: DigestAlgorithm | 'SHA-1'): string {
  return algorithm.replace('-', '').toLowerCase();
}

/**
 * Hashes bytes; several chunks are hashed as one message (a signature's byte ranges).
 *
 * ```ts
 * const value = digest('SHA-256', before, after);
 * ```
 */
export function digest(algorithm: DigestAlgorithm | 'SHA-1', ...chunks: Uint8Array[]): Uint8Array {
  const hash = createHash(nodeHashName(algorithm));
  for (const chunk of chunks) hash.update(chunk);
  return new Uint8Array(hash.digest());
}

/**
 * The CMS signatureAlgorithm for a key type and digest (RSA PKCS#1 v1.5 or ECDSA).
 *
 * ```ts
 * signatureAlgorithmOid('ECDSA', 'SHA-256'); // '1.2.840.10045.4.3.2'
 * ```
 */
export function signatureAlgorithmOid(keyAlgorithm: 'RSA' | 'ECDSA', algorithm: DigestAlgorithm): string {
  if (keyAlgorithm === 'ECDSA') {
    return { 'SHA-256': OID.ecdsaWithSha256, 'SHA-384': OID.ecdsaWithSha384, 'SHA-512': OID.ecdsaWithSha512 }[
      algorithm
    ];
  }
  return { 'SHA-256': OID.sha256WithRsa, 'SHA-384': OID.sha384WithRsa, 'SHA-512': OID.sha512WithRsa }[
    algorithm
  ];
}
