import { X509Certificate } from 'node:crypto';
import { CertificateInvalid } from './errors.js';
import { childAt, childrenOf, isContext, octetsOf, originalBytes, parseDer } from './der.js';
import { digest } from './algorithms.js';
import { BytesMemo } from './bytes-memo.js';
import { children, readTlv } from './der-bytes.js';

export interface CertificateFields {
  /** Content octets of the serial number INTEGER. */
  serialNumber: Uint8Array;
  /** DER of the issuer and subject Names, exactly as in the certificate. */
  issuer: Uint8Array;
  subject: Uint8Array;
  subjectText: string;
  issuerText: string;
  /** The subject's common name, or the whole subject when it has none. */
  commonName: string;
  notBefore: Date;
  notAfter: Date;
  /** Lowercase hex SHA-256 of the DER (the Contract's certificate id). */
  sha256: string;
  isCa: boolean;
}

/**
 * Reads the fields of a certificate that signature validation compares byte for byte (issuer and
 * serial, as CMS names its signer) and the ones reports show.
 *
 * ```ts
 * const { commonName, notAfter } = certificateFields(der);
 * ```
 */
export function certificateFields(der: Uint8Array): CertificateFields {
  return fields.get(der);
}

// Validation reads the same certificates many times (CMS, DSS, chains).
const fields = new BytesMemo(readFields);

function readFields(der: Uint8Array): CertificateFields {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(der);
  } catch {
    throw new CertificateInvalid('The certificate cannot be read');
  }
  const tbs = childAt(parseDer(der, 'Certificate'), 0, 'TBSCertificate');
  const items = childrenOf(tbs);
  const offset = isContext(items[0], 0) ? 1 : 0; // [0] version is absent in v1 certificates
  const cn = /(?:^|\n)CN=([^\n]*)/.exec(x509.subject)?.[1];
  return {
    serialNumber: octetsOf(childAt(tbs, offset, 'serialNumber')),
    issuer: originalBytes(childAt(tbs, offset + 2, 'issuer')),
    subject: originalBytes(childAt(tbs, offset + 4, 'subject')),
    subjectText: x509.subject.replace(/\n/g, ', '),
    issuerText: x509.issuer.replace(/\n/g, ', '),
    commonName: cn ?? x509.subject.replace(/\n/g, ', '),
    notBefore: new Date(x509.validFrom),
    notAfter: new Date(x509.validTo),
    sha256: Buffer.from(digest('SHA-256', der)).toString('hex'),
    isCa: x509.ca,
  };
}

/** The issuer Name and serialNumber INTEGER of a certificate, as encoded in it (its SignerIdentifier). */
export function issuerAndSerialOf(certificate: Uint8Array): { issuer: Uint8Array; serialNumber: Uint8Array } {
  let found = issuersAndSerials.get(certificate);
  if (!found) {
    try {
      const tbs = children(readTlv(certificate))[0];
      const fields = tbs ? children(tbs) : [];
      // TBSCertificate: [0] version (absent in v1), serialNumber, signature, issuer, ...
      const [serial, , issuer] = fields[0]?.tag === 0xa0 ? fields.slice(1) : fields;
      if (serial?.tag !== 0x02 || issuer?.tag !== 0x30) throw new RangeError('not a certificate');
      found = { issuer: issuer.bytes, serialNumber: serial.bytes };
    } catch {
      throw new CertificateInvalid('The certificate cannot be read');
    }
    issuersAndSerials.set(certificate, found);
  }
  return found;
}

// A seal signer passes the same certificate array every time.
const issuersAndSerials = new WeakMap<Uint8Array, { issuer: Uint8Array; serialNumber: Uint8Array }>();
