import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { OID, digest } from '../algorithms.js';
import { CertificateInvalid } from '../errors.js';
import { bytesEqual, parseDer, toDer } from '../der.js';

export interface BuildSignedAttributesOptions {
  /** Digest of the signed content (a PDF signature's byte ranges). */
  messageDigest: Uint8Array;
  /** The signer's certificate (DER), named by signing-certificate-v2. */
  certificate: Uint8Array;
  /** eContentType the attributes vouch for: id-data for PAdES (default), id-ct-TSTInfo for a TSA. */
  contentType?: string;
}

/**
 * The CMS signed attributes of a PAdES signature, as the DER SET that is hashed and signed.
 *
 * DESIGN ("Lessons"): exactly content-type, message-digest and signing-certificate-v2, built with
 * pkijs; no signing-time attribute (EN 319 142-1 forbids it in PAdES baseline; the claimed time is the
 * signature dictionary's /M). The SET is DER: its members are sorted by their encodings (X.690 11.6),
 * so the bytes an external party signs are the bytes we embed.
 *
 * ```ts
 * const signedAttributes = buildSignedAttributes({ messageDigest, certificate: signer.certificate });
 * const value = await signer.sign({ data: signedAttributes, digestAlgorithm: 'SHA-256' });
 * ```
 */
export function buildSignedAttributes(options: BuildSignedAttributesOptions): Uint8Array {
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
  const sorted = sortForDer(attributes);
  const der = encodeAttributeSet(sorted);
  // Finishing reads them back (its digest check): built here, they need no parsing nor re-check.
  attributeSets.set(der, sorted);
  return der;
}

/**
 * Reads signed attributes back (two-step finish gets them as plain data) and checks that pkijs
 * re-encodes them to the very same bytes, since those bytes are what the signature covers.
 *
 * ```ts
 * const messageDigest = readSignedAttributes(state.signedAttributes).find((a) => a.type === OID.messageDigest);
 * ```
 */
export function readSignedAttributes(der: Uint8Array): pkijs.Attribute[] {
  const cached = attributeSets.get(der);
  if (cached) return cached;
  const set = parseDer(der, 'Signed attributes');
  if (!(set instanceof asn1js.Set)) throw new CertificateInvalid('Signed attributes must be a DER SET');
  const attributes = set.valueBlock.value.map((schema) => new pkijs.Attribute({ schema }));
  if (!bytesEqual(encodeAttributeSet(attributes), der)) {
    throw new CertificateInvalid('Signed attributes are not in DER form');
  }
  attributeSets.set(der, attributes);
  return attributes;
}

// Attributes known to encode to these very bytes: built here, or read and checked once.
const attributeSets = new WeakMap<Uint8Array, pkijs.Attribute[]>();

/**
 * The DER SET of attributes. The `[0] IMPLICIT` SignerInfo field and the signed SET differ only in
 * their first byte (RFC 5652 5.4).
 *
 * ```ts
 * const signed = encodeAttributeSet(attributes); // starts with 0x31
 * ```
 */
export function encodeAttributeSet(attributes: pkijs.Attribute[]): Uint8Array {
  const implicit = toDer(new pkijs.SignedAndUnsignedAttributes({ type: 0, attributes }).toSchema());
  implicit[0] = 0x31;
  return implicit;
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

// Parsing a certificate with pkijs costs ~2 ms; a seal signer passes the same arrays every time.
const parsed = new WeakMap<Uint8Array, pkijs.Certificate>();

/**
 * A certificate parsed by pkijs (memoised per array: callers must not mutate certificate bytes).
 *
 * ```ts
 * const { issuer, serialNumber } = readCertificate(signer.certificate);
 * ```
 */
export function readCertificate(der: Uint8Array): pkijs.Certificate {
  const cached = parsed.get(der);
  if (cached) return cached;
  try {
    const certificate = pkijs.Certificate.fromBER(der);
    parsed.set(der, certificate);
    return certificate;
  } catch {
    throw new CertificateInvalid('The certificate cannot be read');
  }
}
