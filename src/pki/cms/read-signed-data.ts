import * as asn1js from 'asn1js';
import { OID, digestFromOid, type DigestAlgorithm } from '../algorithms.js';
import { certificateFields } from '../certificate-fields.js';
import {
  bytesEqual,
  childAt,
  childrenOf,
  isContext,
  octetsOf,
  oidOf,
  originalBytes,
  parseDer,
  type Asn1,
} from '../der.js';

export interface SignedDataContents {
  /** eContentType (id-data for PDF signatures, id-ct-TSTInfo for timestamp tokens). */
  contentType: string;
  /** eContent when encapsulated (a timestamp token's TSTInfo), else undefined (detached). */
  content?: Uint8Array;
  /** Certificates carried in the CMS, as found (DER). */
  certificates: Uint8Array[];
  /** CRLs carried in the CMS (DER). */
  crls: Uint8Array[];
  digestAlgorithmOid: string;
  /** Undefined for digests we do not sign with (SHA-1 appears in old signatures). */
  digestAlgorithm?: DigestAlgorithm | 'SHA-1';
  signatureAlgorithmOid: string;
  /** The algorithm's parameters (RSASSA-PSS carries its hash and salt length there). */
  signatureAlgorithmParameters?: Asn1;
  /** The DER SET that was signed (the `[0] IMPLICIT` field with its tag turned into SET), if any. */
  signedAttributes?: Uint8Array;
  /** Attribute values by OID. */
  signedAttributeValues: Map<string, Asn1[]>;
  messageDigest?: Uint8Array;
  contentTypeAttribute?: string;
  /** A signing-time signed attribute (PAdES baseline signatures have none). */
  signingTime?: Date;
  /** certHash values of signing-certificate-v2 (or v1). */
  signingCertificateHashes: { algorithm: DigestAlgorithm | 'SHA-1'; hash: Uint8Array }[];
  signatureValue: Uint8Array;
  /** The certificate the SignerInfo names (issuer and serial), when the CMS carries it. */
  signerCertificate?: Uint8Array;
  /** signature-time-stamp tokens among the unsigned attributes (B-T). */
  timestampTokens: Uint8Array[];
}

/**
 * Reads a CMS ContentInfo(SignedData) with its first SignerInfo, keeping the original bytes of
 * everything a signature covers (certificates, signed attributes).
 *
 * ```ts
 * const cms = readSignedData({ der: contents });
 * if (!bytesEqual(cms.messageDigest, digest('SHA-256', signedBytes))) ...
 * ```
 */
export function readSignedData(options: { der: Uint8Array }): SignedDataContents {
  const contentInfo = tokenNodes.get(options.der) ?? parseDer(options.der, 'CMS');
  if (oidOf(childAt(contentInfo, 0, 'content type'), 'content type') !== OID.signedData) {
    throw new Error('The CMS is not SignedData');
  }
  const signedData = childAt(childAt(contentInfo, 1, 'content'), 0, 'SignedData');
  const parts = childrenOf(signedData);
  const encap = childAt(signedData, 2, 'encapContentInfo');
  const contentType = oidOf(childAt(encap, 0, 'eContentType'), 'eContentType');
  const eContent = childrenOf(encap)[1];
  const certificates: Uint8Array[] = [];
  const crls: Uint8Array[] = [];
  let signerInfos: Asn1 | undefined;
  for (const part of parts.slice(3)) {
    if (isContext(part, 0)) {
      for (const cert of childrenOf(part))
        if (cert instanceof asn1js.Sequence) certificates.push(originalBytes(cert));
    } else if (isContext(part, 1)) {
      for (const crl of childrenOf(part)) if (crl instanceof asn1js.Sequence) crls.push(originalBytes(crl));
    } else if (part instanceof asn1js.Set) signerInfos = part;
  }
  const signerInfo = signerInfos ? childrenOf(signerInfos)[0] : undefined;
  if (!signerInfo) throw new Error('The CMS has no SignerInfo');

  const fields = childrenOf(signerInfo);
  const sid = childAt(signerInfo, 1, 'sid');
  const digestAlgorithmOid = oidOf(childAt(childAt(signerInfo, 2, 'digestAlgorithm'), 0, 'digest'), 'digest');
  let index = 3;
  let signedAttributes: Uint8Array | undefined;
  const signedAttributeValues = new Map<string, Asn1[]>();
  if (isContext(fields[index], 0)) {
    signedAttributes = originalBytes(fields[index]!);
    signedAttributes[0] = 0x31;
    for (const attribute of childrenOf(fields[index]!)) {
      const type = oidOf(childAt(attribute, 0, 'attribute type'), 'attribute type');
      signedAttributeValues.set(type, childrenOf(childAt(attribute, 1, 'attribute values')));
    }
    index++;
  }
  const signatureAlgorithm = childAt(signerInfo, index, 'signatureAlgorithm');
  const signatureValue = octetsOf(childAt(signerInfo, index + 1, 'signature'));
  const timestampTokens: Uint8Array[] = [];
  const unsigned = fields[index + 2];
  if (isContext(unsigned, 1)) {
    for (const attribute of childrenOf(unsigned!)) {
      if (oidOf(childAt(attribute, 0, 'attribute type'), 'attribute type') !== OID.signatureTimeStampToken)
        continue;
      for (const token of childrenOf(childAt(attribute, 1, 'attribute values'))) {
        const bytes = originalBytes(token);
        if (!(token as asn1js.BaseBlock).error) tokenNodes.set(bytes, token);
        timestampTokens.push(bytes);
      }
    }
  }

  const first = (oid: string): Asn1 | undefined => signedAttributeValues.get(oid)?.[0];
  const messageDigestNode = first(OID.messageDigest);
  const contentTypeNode = first(OID.contentType);
  const signingTimeNode = first(OID.signingTime);
  return {
    contentType,
    content: eContent ? octetsOf(childAt(eContent, 0, 'eContent')) : undefined,
    certificates,
    crls,
    digestAlgorithmOid,
    digestAlgorithm: digestAlgorithmOid === OID.sha1 ? 'SHA-1' : digestFromOid(digestAlgorithmOid),
    signatureAlgorithmOid: oidOf(
      childAt(signatureAlgorithm, 0, 'signature algorithm'),
      'signature algorithm',
    ),
    signatureAlgorithmParameters: childrenOf(signatureAlgorithm)[1],
    signedAttributes,
    signedAttributeValues,
    messageDigest: messageDigestNode ? octetsOf(messageDigestNode) : undefined,
    contentTypeAttribute: contentTypeNode ? oidOf(contentTypeNode, 'content-type attribute') : undefined,
    signingTime: signingTimeNode ? readTime(signingTimeNode) : undefined,
    signingCertificateHashes: readSigningCertificate(signedAttributeValues),
    signatureValue,
    signerCertificate: findSigner(sid, certificates),
    timestampTokens,
  };
}

// Each timestamp token cut out of a signature's CMS, with the value it was read as: reading the
// token (readTimestampToken) then does not parse again what was parsed with the signature. A value
// read within a CMS is the one its bytes read alone would give.
const tokenNodes = new WeakMap<Uint8Array, Asn1>();

function findSigner(sid: Asn1, certificates: Uint8Array[]): Uint8Array | undefined {
  if (!(sid instanceof asn1js.Sequence)) return undefined; // [0] subjectKeyIdentifier: matched by verification
  const issuer = originalBytes(childAt(sid, 0, 'sid issuer'));
  const serial = octetsOf(childAt(sid, 1, 'sid serial'));
  return certificates.find((der) => {
    const fields = certificateFields(der);
    return bytesEqual(fields.issuer, issuer) && bytesEqual(fields.serialNumber, serial);
  });
}

function readSigningCertificate(values: Map<string, Asn1[]>): SignedDataContents['signingCertificateHashes'] {
  const result: SignedDataContents['signingCertificateHashes'] = [];
  const v2 = values.get(OID.signingCertificateV2)?.[0];
  if (v2) {
    for (const essCertId of childrenOf(childAt(v2, 0, 'certs'))) {
      const items = childrenOf(essCertId);
      // ESSCertIDv2: hashAlgorithm DEFAULT SHA-256 is omitted when it is the default.
      const hasAlgorithm = items[0] instanceof asn1js.Sequence;
      const algorithmOid = hasAlgorithm
        ? oidOf(childAt(items[0]!, 0, 'hash algorithm'), 'hash algorithm')
        : OID.sha256;
      const hashNode = items[hasAlgorithm ? 1 : 0];
      const algorithm = algorithmOid === OID.sha1 ? 'SHA-1' : digestFromOid(algorithmOid);
      if (hashNode && algorithm) result.push({ algorithm, hash: octetsOf(hashNode) });
    }
  }
  const v1 = values.get(OID.signingCertificate)?.[0];
  if (v1) {
    for (const essCertId of childrenOf(childAt(v1, 0, 'certs'))) {
      result.push({ algorithm: 'SHA-1', hash: octetsOf(childAt(essCertId, 0, 'certHash')) });
    }
  }
  return result;
}

/**
 * UTCTime or GeneralizedTime as a Date.
 *
 * ```ts
 * const genTime = readTime(childAt(tstInfo, 4, 'genTime'));
 * ```
 */
export function readTime(node: Asn1): Date | undefined {
  if (node instanceof asn1js.UTCTime || node instanceof asn1js.GeneralizedTime) return node.toDate();
  return undefined;
}
