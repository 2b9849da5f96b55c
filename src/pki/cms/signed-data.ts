import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { OID, digestOid, signatureAlgorithmOid, type DigestAlgorithm } from '../algorithms.js';
import { parseDer, toDer } from '../der.js';
import type { KeyAlgorithm } from '../signers/signer.js';
import { readCertificate, readSignedAttributes } from './signed-attributes.js';

export interface BuildSignedDataOptions {
  /** DER SET of signed attributes, exactly as signed. */
  signedAttributes: Uint8Array;
  /** Raw signature value over `signedAttributes` (already verified by the caller). */
  signatureValue: Uint8Array;
  certificate: Uint8Array;
  chain: Uint8Array[];
  digestAlgorithm: DigestAlgorithm;
  keyAlgorithm: KeyAlgorithm;
  /** RFC 3161 token over the signature value, added as the signature-time-stamp unsigned attribute (B-T). */
  timestampToken?: Uint8Array;
  /** eContentType; detached id-data for PAdES. With `content`, the content is encapsulated (a TSA's TSTInfo). */
  contentType?: string;
  content?: Uint8Array;
}

/**
 * A CMS ContentInfo(SignedData) around signed attributes and a signature value produced elsewhere
 * (a token, a two-step client, a PKCS#12 key), built with pkijs. Detached (no eContent) for PAdES,
 * SubFilter ETSI.CAdES.detached.
 *
 * ```ts
 * const cms = buildSignedData({ signedAttributes, signatureValue, certificate, chain, digestAlgorithm: 'SHA-256', keyAlgorithm: 'RSA' });
 * ```
 */
export function buildSignedData(options: BuildSignedDataOptions): Uint8Array {
  const certificate = readCertificate(options.certificate);
  const digestAlgorithm = new pkijs.AlgorithmIdentifier({ algorithmId: digestOid(options.digestAlgorithm) });
  const sigOid = signatureAlgorithmOid(options.keyAlgorithm, options.digestAlgorithm);
  const signerInfo = new pkijs.SignerInfo({
    version: 1,
    sid: new pkijs.IssuerAndSerialNumber({
      issuer: certificate.issuer,
      serialNumber: certificate.serialNumber,
    }),
    digestAlgorithm,
    signedAttrs: new pkijs.SignedAndUnsignedAttributes({
      type: 0,
      attributes: readSignedAttributes(options.signedAttributes),
    }),
    // RSA algorithm identifiers carry an explicit NULL parameter; ECDSA ones carry none (RFC 5754).
    signatureAlgorithm: new pkijs.AlgorithmIdentifier(
      options.keyAlgorithm === 'RSA'
        ? { algorithmId: sigOid, algorithmParams: new asn1js.Null() }
        : { algorithmId: sigOid },
    ),
    signature: new asn1js.OctetString({ valueHex: options.signatureValue }),
  });
  if (options.timestampToken) {
    signerInfo.unsignedAttrs = new pkijs.SignedAndUnsignedAttributes({
      type: 1,
      attributes: [
        new pkijs.Attribute({
          type: OID.signatureTimeStampToken,
          values: [parseDer(options.timestampToken, 'Timestamp token')],
        }),
      ],
    });
  }
  const seen = new Set<string>();
  const certificates = [options.certificate, ...options.chain]
    .filter((der) => {
      const key = Buffer.from(der).toString('base64');
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .map((der) => new EncodedCertificate(der));
  const signedData = new pkijs.SignedData({
    // RFC 5652 5.1: version 3 when the encapsulated content is not id-data (a TSA's TSTInfo).
    version: (options.contentType ?? OID.data) === OID.data ? 1 : 3,
    encapContentInfo: new pkijs.EncapsulatedContentInfo({
      eContentType: options.contentType ?? OID.data,
      ...(options.content ? { eContent: new asn1js.OctetString({ valueHex: options.content }) } : {}),
    }),
    digestAlgorithms: [digestAlgorithm],
    certificates,
    signerInfos: [signerInfo],
  });
  const contentInfo = new pkijs.ContentInfo({
    contentType: OID.signedData,
    content: signedData.toSchema(true),
  });
  return toDer(contentInfo.toSchema());
}

/**
 * A certificate that encodes back to its original bytes, parsed once per array. pkijs would re-parse
 * its TBS part on every encoding (slow) and rebuild the structure from fields.
 */
class EncodedCertificate extends pkijs.Certificate {
  readonly #der: Uint8Array;

  constructor(der: Uint8Array) {
    super();
    this.#der = der;
  }

  override toSchema(): asn1js.Sequence {
    let schema = schemas.get(this.#der);
    if (!schema) {
      // asn1js re-encodes a parsed DER value to the same bytes (definite, minimal lengths).
      schema = parseDer(this.#der, 'Certificate') as asn1js.Sequence;
      schemas.set(this.#der, schema);
    }
    return schema;
  }
}

const schemas = new WeakMap<Uint8Array, asn1js.Sequence>();
