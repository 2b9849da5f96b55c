import { X509Certificate, constants, verify, type KeyObject } from 'node:crypto';
import { OID, digestFromOid, nodeHashName, type DigestAlgorithm } from './algorithms.js';
import { childAt, childrenOf, integerOf, isContext, oidOf, type Asn1 } from './der.js';
import { BytesMemo } from './bytes-memo.js';
import { SignatureValueInvalid } from './errors.js';

export interface VerifySignatureValueOptions {
  /** The signer's certificate (DER). */
  certificate: Uint8Array;
  /** What was signed (DER signed attributes). */
  data: Uint8Array;
  /** Raw signature: RSA PKCS#1 v1.5, or ECDSA as DER (raw r||s is accepted and converted). */
  signature: Uint8Array;
  digestAlgorithm: DigestAlgorithm;
}

/**
 * Checks a raw signature value against the certificate's public key and returns it in the form CMS
 * embeds (ECDSA as DER). Throws `SignatureValueInvalid` otherwise, so a wrong key, a wrong digest or a
 * corrupted upload in two-step signing is refused before anything is embedded.
 *
 * ```ts
 * const value = verifySignatureValue({ certificate, data: signedAttributes, signature, digestAlgorithm: 'SHA-256' });
 * ```
 */
export function verifySignatureValue(options: VerifySignatureValueOptions): Uint8Array {
  const key = publicKeyOf(options.certificate);
  const hash = nodeHashName(options.digestAlgorithm);
  if (key.asymmetricKeyType === 'rsa') {
    if (verify(hash, options.data, { key, padding: constants.RSA_PKCS1_PADDING }, options.signature)) {
      return options.signature;
    }
  } else if (key.asymmetricKeyType === 'ec') {
    if (safeVerify(() => verify(hash, options.data, { key, dsaEncoding: 'der' }, options.signature))) {
      return options.signature;
    }
    // Tokens and WebCrypto give r||s (IEEE P1363); CMS wants the DER SEQUENCE of two INTEGERs.
    if (safeVerify(() => verify(hash, options.data, { key, dsaEncoding: 'ieee-p1363' }, options.signature))) {
      return p1363ToDer(options.signature);
    }
  } else {
    throw new SignatureValueInvalid(`Unsupported key type ${key.asymmetricKeyType ?? 'unknown'}`);
  }
  throw new SignatureValueInvalid('The signature value does not match the certificate and the signed digest');
}

function safeVerify(check: () => boolean): boolean {
  try {
    return check();
  } catch {
    return false;
  }
}

/**
 * Converts an ECDSA signature from r||s to DER `SEQUENCE { r INTEGER, s INTEGER }`.
 *
 * ```ts
 * const der = p1363ToDer(tokenOutput); // CKM_ECDSA gives r||s
 * ```
 */
export function p1363ToDer(signature: Uint8Array): Uint8Array {
  const half = signature.length / 2;
  const integer = (bytes: Uint8Array): Buffer => {
    let start = 0;
    while (start < bytes.length - 1 && bytes[start] === 0) start++;
    let body = Buffer.from(bytes.subarray(start));
    if (body[0]! & 0x80) body = Buffer.concat([Buffer.from([0]), body]);
    return Buffer.concat([Buffer.from([0x02]), derLengthBytes(body.length), body]);
  };
  const content = Buffer.concat([integer(signature.subarray(0, half)), integer(signature.subarray(half))]);
  return new Uint8Array(Buffer.concat([Buffer.from([0x30]), derLengthBytes(content.length), content]));
}

function derLengthBytes(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export interface SignatureMatchesOptions {
  certificate: Uint8Array;
  data: Uint8Array;
  signature: Uint8Array;
  /** SignerInfo.signatureAlgorithm. */
  signatureAlgorithmOid: string;
  /** SignerInfo.digestAlgorithm (used when the signature algorithm names no hash, e.g. rsaEncryption). */
  digestAlgorithm?: DigestAlgorithm | 'SHA-1';
  /** RSASSA-PSS parameters. */
  parameters?: Asn1;
}

const HASH_BY_SIGNATURE_OID: Record<string, DigestAlgorithm | 'SHA-1'> = {
  [OID.sha1WithRsa]: 'SHA-1',
  [OID.sha256WithRsa]: 'SHA-256',
  [OID.sha384WithRsa]: 'SHA-384',
  [OID.sha512WithRsa]: 'SHA-512',
  [OID.ecdsaWithSha256]: 'SHA-256',
  [OID.ecdsaWithSha384]: 'SHA-384',
  [OID.ecdsaWithSha512]: 'SHA-512',
};

/**
 * Whether a signature found in a CMS verifies (RSA PKCS#1 v1.5, RSASSA-PSS, ECDSA), for validation
 * of documents signed by anyone, not only by us.
 *
 * ```ts
 * const ok = signatureMatches({ certificate, data: signedAttributes, signature, signatureAlgorithmOid, digestAlgorithm });
 * ```
 */
export function signatureMatches(options: SignatureMatchesOptions): boolean {
  try {
    const key = publicKeyOf(options.certificate);
    if (options.signatureAlgorithmOid === OID.rsassaPss) {
      const pss = readPssParameters(options.parameters);
      return verify(
        nodeHashName(pss.hash),
        options.data,
        { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: pss.saltLength },
        options.signature,
      );
    }
    const hash = HASH_BY_SIGNATURE_OID[options.signatureAlgorithmOid] ?? options.digestAlgorithm;
    if (!hash) return false;
    if (key.asymmetricKeyType === 'rsa') {
      return verify(
        nodeHashName(hash),
        options.data,
        { key, padding: constants.RSA_PKCS1_PADDING },
        options.signature,
      );
    }
    if (key.asymmetricKeyType === 'ec') {
      return verify(nodeHashName(hash), options.data, { key, dsaEncoding: 'der' }, options.signature);
    }
    return false;
  } catch {
    return false;
  }
}

function readPssParameters(parameters: Asn1 | undefined): {
  hash: DigestAlgorithm | 'SHA-1';
  saltLength: number;
} {
  // RFC 4055 defaults: SHA-1, MGF1 with SHA-1, salt length 20.
  let hash: DigestAlgorithm | 'SHA-1' = 'SHA-1';
  let saltLength = 20;
  for (const field of parameters ? childrenOf(parameters) : []) {
    if (isContext(field, 0)) {
      const oid = oidOf(childAt(childAt(field, 0, 'hashAlgorithm'), 0, 'hash'), 'hash');
      hash = oid === OID.sha1 ? 'SHA-1' : (digestFromOid(oid) ?? 'SHA-1');
    } else if (isContext(field, 2)) {
      saltLength = integerOf(childAt(field, 0, 'saltLength'), 'saltLength');
    }
  }
  return { hash, saltLength };
}

/** The certificate's public key, parsed once per certificate (a seal signer passes the same array each time). */
export function publicKeyOf(certificate: Uint8Array): KeyObject {
  return publicKeys.get(certificate);
}

// Seal signers and validation check against the same certificates again and again.
const publicKeys = new BytesMemo((certificate) => new X509Certificate(certificate).publicKey);
