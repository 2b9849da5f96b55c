import * as asn1js from 'asn1js';
import { OID, digestFromOid, type DigestAlgorithm } from '../algorithms.js';
import { certificateFields } from '../certificate-fields.js';
import { BytesMemo } from '../bytes-memo.js';
import { children, oid, readTlv, type Tlv } from '../der-bytes.js';
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
  /**
   * The CRLs and OCSP responses of the adbe-revocationInfoArchival signed attribute (ISO 32000-1
   * 12.8.3.3.2): revocation data the signer fetched before signing, covered by the signature.
   */
  archivedRevocation: { crls: Uint8Array[]; ocsps: Uint8Array[] };
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
  const parse = tokenParses.get(options.der) ?? parseCms(options.der);
  const contentInfo = parse.root;
  const bytesOf = (node: Asn1): Uint8Array => parse.bytesOf(node);
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
        if (cert instanceof asn1js.Sequence || parse.setAside(cert)) certificates.push(bytesOf(cert));
    } else if (isContext(part, 1)) {
      for (const crl of childrenOf(part)) if (crl instanceof asn1js.Sequence) crls.push(bytesOf(crl));
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
    signedAttributes = bytesOf(fields[index]!);
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
        const bytes = bytesOf(token);
        if (!(token as asn1js.BaseBlock).error) tokenParses.set(bytes, parse.within(token));
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
    archivedRevocation: readRevocationArchival(first(OID.adbeRevocationInfoArchival), bytesOf),
  };
}

/** The CRLs ([0]) and OCSP responses ([1]) of a RevocationInfoArchival value; what is not one is skipped. */
function readRevocationArchival(
  node: Asn1 | undefined,
  bytesOf: (node: Asn1) => Uint8Array,
): SignedDataContents['archivedRevocation'] {
  const found: SignedDataContents['archivedRevocation'] = { crls: [], ocsps: [] };
  if (!(node instanceof asn1js.Sequence)) return found;
  for (const part of childrenOf(node)) {
    const into = isContext(part, 0) ? found.crls : isContext(part, 1) ? found.ocsps : undefined;
    const list = into ? childrenOf(part)[0] : undefined;
    if (!into || !(list instanceof asn1js.Sequence)) continue;
    for (const item of childrenOf(list)) if (item instanceof asn1js.Sequence) into.push(bytesOf(item));
  }
  return found;
}

// Each timestamp token cut out of a signature's CMS, with the tree it was read as: reading the token
// (readTimestampToken) then does not parse again what was parsed with the signature. A value read
// within a CMS is the one its bytes read alone would give.
const tokenParses = new WeakMap<Uint8Array, CmsParse>();

/** A CMS read by asn1js, and where in it the certificates set aside lie (see parseCms). */
interface CmsParse {
  root: Asn1;
  /** A copy of the bytes the tree covers as they are in the CMS (its certificates included). */
  bytesOf(node: Asn1): Uint8Array;
  /** Whether a node of the tree stands for a certificate read apart. */
  setAside(node: Asn1): boolean;
  /** The same parse, rooted at a node of it. */
  within(node: Asn1): CmsParse;
}

// The tag a certificate's SEQUENCE is read with when set aside: a primitive of the private class,
// whose content asn1js keeps as it is.
const SET_ASIDE = 0xc0;

/**
 * Parses a CMS with asn1js, its certificates set aside: a document's signatures carry the same
 * certificates (the signer's chain, and in each timestamp token the TSA's), about four fifths of
 * each CMS's bytes, and asn1js builds an object per value of each. So each certificate at a place
 * where readSignedData takes it as one (a SEQUENCE among SignedData's [0] certificates, also within
 * the timestamp tokens of the first SignerInfo) is checked once per content (asn1js reads it alone:
 * `wellFormed`), and the CMS is parsed with that certificate's tag made a primitive one, its bytes
 * kept whole. A CMS asn1js reads whole reads the same way set aside, value for value; when anything
 * is not as expected (a certificate asn1js refuses, a layout the walk does not know), it is parsed
 * whole, so errors are asn1js's own.
 */
function parseCms(der: Uint8Array): CmsParse {
  const aside = certificatesIn(der);
  if (aside.length > 0 && aside.every((at) => wellFormed.get(readTlv(der, at).bytes))) {
    const copy = new Uint8Array(der);
    for (const at of aside) copy[at] = SET_ASIDE;
    try {
      return cmsParse(parseDer(copy, 'CMS'), copy, der, new Set(aside));
    } catch {
      // Read whole below, for asn1js's own words.
    }
  }
  return cmsParse(parseDer(der, 'CMS'), der, der, new Set());
}

function cmsParse(root: Asn1, parsed: Uint8Array, original: Uint8Array, aside: Set<number>): CmsParse {
  const view = (node: Asn1): Uint8Array => (node as asn1js.BaseBlock).valueBeforeDecodeView;
  const offsetOf = (node: Asn1): number => view(node).byteOffset - parsed.byteOffset;
  return {
    root,
    bytesOf: (node) => new Uint8Array(original.subarray(offsetOf(node), offsetOf(node) + view(node).length)),
    setAside: (node) => aside.has(offsetOf(node)),
    within: (node) => cmsParse(node, parsed, original, aside),
  };
}

/** Certificates asn1js reads alone, without error: a CMS holding them reads them the same. */
const wellFormed = new BytesMemo((bytes) => {
  try {
    const parsed = asn1js.fromBER(bytes);
    return parsed.offset === bytes.length && !parsed.result.error;
  } catch {
    return false;
  }
});

const TIMESTAMP_TOKEN_ATTRIBUTE = oid(OID.signatureTimeStampToken);

/**
 * Where readSignedData finds certificates in a CMS (offsets of their SEQUENCEs): SignedData's [0]
 * certificates, and those of the timestamp tokens among the first SignerInfo's unsigned attributes
 * (in the last SET, as readSignedData takes it). None where the layout is not the expected one.
 */
function certificatesIn(der: Uint8Array): number[] {
  const offsetOf = (value: Tlv): number => value.bytes.byteOffset - der.byteOffset;
  try {
    const contentInfo = readTlv(der);
    const explicit = contentInfo.tag === 0x30 ? children(contentInfo)[1] : undefined;
    const signedData = explicit?.tag === 0xa0 ? children(explicit)[0] : undefined;
    if (signedData?.tag !== 0x30) return [];
    const parts = children(signedData).slice(3);
    const found: number[] = [];
    for (const part of parts) {
      if (part.tag !== 0xa0) continue;
      for (const certificate of children(part))
        if (certificate.tag === 0x30) found.push(offsetOf(certificate));
    }
    const signerInfos = parts.filter((part) => part.tag === 0x31).at(-1);
    const signerInfo = signerInfos ? children(signerInfos)[0] : undefined;
    const fields = signerInfo?.tag === 0x30 ? children(signerInfo) : [];
    const unsigned = fields[(fields[3]?.tag === 0xa0 || fields[3]?.tag === 0x80 ? 4 : 3) + 2];
    for (const attribute of unsigned?.tag === 0xa1 ? children(unsigned) : []) {
      const [type, values] = attribute.tag === 0x30 ? children(attribute) : [];
      if (!type || !bytesEqual(type.bytes, TIMESTAMP_TOKEN_ATTRIBUTE) || values?.tag !== 0x31) continue;
      for (const token of children(values)) {
        if (token.tag === 0x30) found.push(...certificatesIn(token.bytes).map((at) => offsetOf(token) + at));
      }
    }
    return found;
  } catch {
    return [];
  }
}

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
