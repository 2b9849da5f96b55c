import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { OID, digest, digestOid, signatureAlgorithmOid } from '../../src/pki/algorithms.js';
import { parseDer, toDer } from '../../src/pki/der.js';
import {
  encodeAttributeSet,
  readSignedAttributes,
  type BuildSignedAttributesOptions,
} from '../../src/pki/cms/signed-attributes.js';
import type { BuildSignedDataOptions } from '../../src/pki/cms/signed-data.js';

/**
 * The CMS as pkijs builds it from the same parts: the reference our byte-level builder
 * (src/pki/cms/signed-data.ts) must match byte for byte. Test-only.
 */
export function pkijsSignedData(options: BuildSignedDataOptions): Uint8Array {
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

/** The signed attributes as pkijs builds them: the reference for src/pki/cms/signed-attributes.ts. Test-only. */
export function pkijsSignedAttributes(options: BuildSignedAttributesOptions): Uint8Array {
  const certificate = readCertificate(options.certificate);
  const attributes = [
    new pkijs.Attribute({
      type: OID.contentType,
      values: [new asn1js.ObjectIdentifier({ value: options.contentType ?? OID.data })],
    }),
    new pkijs.Attribute({
      type: OID.messageDigest,
      values: [new asn1js.OctetString({ valueHex: options.messageDigest })],
    }),
    new pkijs.Attribute({
      type: OID.signingCertificateV2,
      values: [signingCertificateV2(options.certificate, certificate)],
    }),
  ];
  return encodeAttributeSet(sortForDer(attributes));
}

function sortForDer(attributes: pkijs.Attribute[]): pkijs.Attribute[] {
  return attributes
    .map((attribute) => ({ attribute, der: Buffer.from(toDer(attribute.toSchema())) }))
    .sort((a, b) => Buffer.compare(a.der, b.der))
    .map((entry) => entry.attribute);
}

/**
 * SigningCertificateV2 (RFC 5035): one ESSCertIDv2 with the SHA-256 hash of the certificate (the
 * default hashAlgorithm, so omitted) and issuerSerial, binding the signature to that certificate.
 */
function signingCertificateV2(der: Uint8Array, certificate: pkijs.Certificate): asn1js.Sequence {
  const issuerSerial = new asn1js.Sequence({
    value: [
      new asn1js.Sequence({
        value: [
          new asn1js.Constructed({
            idBlock: { tagClass: 3, tagNumber: 4 },
            value: [certificate.issuer.toSchema()],
          }),
        ],
      }),
      certificate.serialNumber,
    ],
  });
  const essCertIdV2 = new asn1js.Sequence({
    value: [new asn1js.OctetString({ valueHex: digest('SHA-256', der) }), issuerSerial],
  });
  return new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [essCertIdV2] })] });
}

function readCertificate(der: Uint8Array): pkijs.Certificate {
  return pkijs.Certificate.fromBER(der);
}
