import * as asn1js from 'asn1js';
import { X509Certificate } from 'node:crypto';
import { OID, digestFromOid, type DigestAlgorithm } from './algorithms.js';
import { BytesMemo } from './bytes-memo.js';
import { readSignedData, readTime } from './cms/read-signed-data.js';
import { verifySignedData } from './cms/verify-signed-data.js';
import { childAt, childrenOf, octetsOf, oidOf, parseDer } from './der.js';

export interface TimestampTokenInfo {
  genTime: Date;
  hashAlgorithm?: DigestAlgorithm | 'SHA-1';
  hashedMessage: Uint8Array;
  /** Hex of the nonce INTEGER's content octets, when the token has one. */
  nonce?: string;
  serialNumber: string;
  policy: string;
  tsaCertificate?: Uint8Array;
  certificates: Uint8Array[];
  /** The token's CMS signature verifies and its signer may issue timestamps. */
  valid: boolean;
  problems: string[];
}

/**
 * Reads and checks an RFC 3161 timestamp token (a CMS SignedData over a TSTInfo): the TSA's signature,
 * and that its certificate carries the timeStamping extended key usage (RFC 3161 2.3).
 *
 * ```ts
 * const info = readTimestampToken({ token });
 * if (!info.valid || !bytesEqual(info.hashedMessage, expected)) ...
 * ```
 */
export function readTimestampToken(options: { token: Uint8Array }): TimestampTokenInfo {
  const cms = readSignedData({ der: options.token });
  const problems: string[] = [];
  if (cms.contentType !== OID.tstInfo || !cms.content) throw new Error('Not a timestamp token (no TSTInfo)');
  const tstInfo = parseDer(cms.content, 'TSTInfo');
  const fields = childrenOf(tstInfo);
  const imprint = childAt(tstInfo, 2, 'messageImprint');
  const hashOid = oidOf(childAt(childAt(imprint, 0, 'hashAlgorithm'), 0, 'hash'), 'hash');
  const genTime = readTime(childAt(tstInfo, 4, 'genTime'));
  if (!genTime) throw new Error('The timestamp token has no genTime');
  const nonceNode = fields.slice(5).find((node) => node instanceof asn1js.Integer);
  const check = verifySignedData({ cms, content: cms.content });
  problems.push(...check.problems);
  let eku = false;
  if (check.signerCertificate) {
    eku = hasTimeStampingUsage(check.signerCertificate);
    if (!eku) problems.push('The TSA certificate lacks the timeStamping extended key usage');
  }
  return {
    genTime,
    hashAlgorithm: hashOid === OID.sha1 ? 'SHA-1' : digestFromOid(hashOid),
    hashedMessage: octetsOf(childAt(imprint, 1, 'hashedMessage')),
    nonce: nonceNode ? Buffer.from(octetsOf(nonceNode)).toString('hex') : undefined,
    serialNumber: Buffer.from(octetsOf(childAt(tstInfo, 3, 'serialNumber'))).toString('hex'),
    policy: oidOf(childAt(tstInfo, 1, 'policy'), 'policy'),
    tsaCertificate: check.signerCertificate,
    certificates: cms.certificates,
    valid: check.digestMatches && check.signatureValid && check.signingCertificateMatches && eku,
    problems,
  };
}

function hasTimeStampingUsage(der: Uint8Array): boolean {
  return timeStampingUsage.get(der);
}

// A document's signature timestamps mostly come from one TSA, each token carrying its certificate anew.
const timeStampingUsage = new BytesMemo((der) => {
  try {
    return new X509Certificate(der).keyUsage?.includes(OID.extKeyUsageTimeStamping) ?? false;
  } catch {
    return false;
  }
});
