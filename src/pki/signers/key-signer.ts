import { X509Certificate, sign, type KeyObject } from 'node:crypto';
import { nodeHashName } from '../algorithms.js';
import { CertificateInvalid } from '../errors.js';
import type { KeyAlgorithm, SignOptions, Signer } from './signer.js';

export interface CreateKeySignerOptions {
  privateKey: KeyObject;
  certificate: Uint8Array;
  chain?: Uint8Array[];
}

/**
 * A signer holding a private key in memory (the dev CA's seal key, a key read from PKCS#12).
 * Refuses a key that does not belong to the certificate, so a misconfiguration fails at start-up
 * rather than as an invalid signature later.
 *
 * ```ts
 * const signer = createKeySigner({ privateKey, certificate, chain: [intermediate] });
 * ```
 */
export function createKeySigner(options: CreateKeySignerOptions): Signer {
  const certificate = new X509Certificate(options.certificate);
  if (!certificate.checkPrivateKey(options.privateKey)) {
    throw new CertificateInvalid('The private key does not belong to the certificate');
  }
  const keyAlgorithm = keyAlgorithmOf(options.privateKey);
  const privateKey = options.privateKey;
  return {
    certificate: options.certificate,
    chain: options.chain ?? [],
    keyAlgorithm,
    async sign({ data, digestAlgorithm }: SignOptions): Promise<Uint8Array> {
      // RSA keys sign PKCS#1 v1.5 by default and EC keys give DER (r, s): both what CMS expects.
      return new Uint8Array(sign(nodeHashName(digestAlgorithm), data, privateKey));
    },
  };
}

/**
 * The Signer key algorithm of a private or public key.
 *
 * ```ts
 * keyAlgorithmOf(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey); // 'ECDSA'
 * ```
 */
export function keyAlgorithmOf(key: KeyObject): KeyAlgorithm {
  if (key.asymmetricKeyType === 'rsa') return 'RSA';
  if (key.asymmetricKeyType === 'ec') return 'ECDSA';
  throw new CertificateInvalid(
    `Unsupported key type ${key.asymmetricKeyType ?? 'unknown'} (RSA or ECDSA only)`,
  );
}
