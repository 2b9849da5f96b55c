import type { DigestAlgorithm } from '../algorithms.js';

export type KeyAlgorithm = 'RSA' | 'ECDSA';

export interface SignOptions {
  /** DER of the CMS signed attributes (a SET); the signer hashes it with `digestAlgorithm`. */
  data: Uint8Array;
  digestAlgorithm: DigestAlgorithm;
}

/**
 * What an external signer plugs into: a certificate, its chain, and a function that signs the DER
 * signed attributes. Implementations (`p12.ts`, `pkcs11.ts`, `key-signer.ts`) are siblings with the
 * same shape, so a seal provider is chosen by configuration alone.
 *
 * The result is the raw signature value: RSA PKCS#1 v1.5, or ECDSA as a DER `Ecdsa-Sig-Value`.
 *
 * ```ts
 * const signer: Signer = await createP12Signer({ p12, password });
 * const value = await signer.sign({ data: signedAttributesDer, digestAlgorithm: 'SHA-256' });
 * ```
 */
export interface Signer {
  /** The signing certificate (DER). */
  certificate: Uint8Array;
  /** Intermediate (and optionally root) certificates (DER), nearest issuer first. */
  chain: Uint8Array[];
  keyAlgorithm: KeyAlgorithm;
  sign(options: SignOptions): Promise<Uint8Array>;
}
