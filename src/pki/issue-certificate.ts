import 'reflect-metadata';
import { webcrypto, type KeyObject } from 'node:crypto';
import * as x509 from '@peculiar/x509';

export type KeyUsage = 'digitalSignature' | 'nonRepudiation' | 'keyCertSign' | 'cRLSign';

export interface IssueCertificateOptions {
  /** Distinguished name, e.g. `CN=Signery dev seal, O=Signery`. */
  subject: string;
  publicKey: KeyObject;
  /** The issuing CA; absent for a self-signed certificate, signed with `selfPrivateKey`. */
  issuer?: { certificate: Uint8Array; privateKey: KeyObject };
  selfPrivateKey?: KeyObject;
  notBefore?: Date;
  notAfter: Date;
  /** A CA certificate (basicConstraints cA, critical). */
  ca?: boolean;
  keyUsage: KeyUsage[];
  /** Extended key usage OIDs; marked critical (RFC 3161 2.3 requires it for a TSA's timeStamping). */
  extendedKeyUsage?: string[];
  crlDistributionPoint?: string;
  /** Written into the Authority Information Access extension as the certificate's OCSP responder. */
  ocspUrl?: string;
  serialNumber?: string;
}

const KEY_USAGE_FLAGS: Record<KeyUsage, x509.KeyUsageFlags> = {
  digitalSignature: x509.KeyUsageFlags.digitalSignature,
  nonRepudiation: x509.KeyUsageFlags.nonRepudiation,
  keyCertSign: x509.KeyUsageFlags.keyCertSign,
  cRLSign: x509.KeyUsageFlags.cRLSign,
};

const crypto = webcrypto;

/**
 * Issues an X.509 certificate with @peculiar/x509 (the dev CA, test signers, a test TSA).
 *
 * ```ts
 * const der = await issueCertificate({ subject: 'CN=Seal', publicKey, issuer: { certificate: caDer, privateKey: caKey },
 *   notAfter: new Date(Date.now() + 365 * 86400_000), keyUsage: ['digitalSignature', 'nonRepudiation'] });
 * ```
 */
export async function issueCertificate(options: IssueCertificateOptions): Promise<Uint8Array> {
  const signingKeyObject = options.issuer?.privateKey ?? options.selfPrivateKey;
  if (!signingKeyObject) throw new Error('issueCertificate needs an issuer or selfPrivateKey');
  const signingAlgorithm = webAlgorithm(signingKeyObject);
  const signingKey = await toCryptoKey(signingKeyObject, 'private');
  const publicKey = await toCryptoKey(options.publicKey, 'public');
  const usages = options.keyUsage.reduce((flags, usage) => flags | KEY_USAGE_FLAGS[usage], 0);
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(options.ca ?? false, undefined, true),
    new x509.KeyUsagesExtension(usages, true),
    await x509.SubjectKeyIdentifierExtension.create(publicKey, false, crypto),
  ];
  if (options.extendedKeyUsage)
    extensions.push(new x509.ExtendedKeyUsageExtension(options.extendedKeyUsage, true));
  if (options.crlDistributionPoint) {
    extensions.push(new x509.CRLDistributionPointsExtension([options.crlDistributionPoint]));
  }
  if (options.ocspUrl) {
    extensions.push(
      new x509.AuthorityInfoAccessExtension({ ocsp: [new x509.GeneralName('url', options.ocspUrl)] }),
    );
  }
  const issuerCertificate = options.issuer ? new x509.X509Certificate(options.issuer.certificate) : undefined;
  if (issuerCertificate) {
    extensions.push(await x509.AuthorityKeyIdentifierExtension.create(issuerCertificate, false, crypto));
  }
  const certificate = await x509.X509CertificateGenerator.create(
    {
      serialNumber: options.serialNumber ?? randomSerial(),
      subject: options.subject,
      issuer: issuerCertificate ? issuerCertificate.subjectName : options.subject,
      notBefore: options.notBefore ?? new Date(Date.now() - 60_000),
      notAfter: options.notAfter,
      signingAlgorithm,
      publicKey,
      signingKey,
      extensions,
    },
    crypto,
  );
  return new Uint8Array(certificate.rawData);
}

export interface IssueCrlOptions {
  issuer: { certificate: Uint8Array; privateKey: KeyObject };
  thisUpdate: Date;
  nextUpdate: Date;
  /** Revoked serial numbers (hex). */
  revoked?: { serialNumber: string; revocationDate: Date }[];
}

/**
 * Issues a CRL signed by a CA: real revocation data for B-LT when the CA has no OCSP responder.
 *
 * ```ts
 * const crl = await issueCrl({ issuer: { certificate: rootDer, privateKey: rootKey }, thisUpdate: now, nextUpdate });
 * ```
 */
export async function issueCrl(options: IssueCrlOptions): Promise<Uint8Array> {
  const issuerCertificate = new x509.X509Certificate(options.issuer.certificate);
  const crl = await x509.X509CrlGenerator.create(
    {
      issuer: issuerCertificate.subjectName,
      thisUpdate: options.thisUpdate,
      nextUpdate: options.nextUpdate,
      signingAlgorithm: webAlgorithm(options.issuer.privateKey),
      signingKey: await toCryptoKey(options.issuer.privateKey, 'private'),
      extensions: [await x509.AuthorityKeyIdentifierExtension.create(issuerCertificate, false, crypto)],
      entries: (options.revoked ?? []).map((entry) => ({
        serialNumber: entry.serialNumber,
        revocationDate: entry.revocationDate,
      })),
    },
    crypto,
  );
  return new Uint8Array(crl.rawData);
}

function webAlgorithm(key: KeyObject): webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams {
  if (key.asymmetricKeyType === 'rsa') return { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    const namedCurve = curve === 'secp384r1' ? 'P-384' : curve === 'secp521r1' ? 'P-521' : 'P-256';
    return {
      name: 'ECDSA',
      namedCurve,
      hash: namedCurve === 'P-256' ? 'SHA-256' : 'SHA-384',
    };
  }
  throw new Error(`Unsupported key type ${key.asymmetricKeyType ?? 'unknown'}`);
}

async function toCryptoKey(key: KeyObject, kind: 'private' | 'public'): Promise<webcrypto.CryptoKey> {
  const algorithm = webAlgorithm(key);
  if (kind === 'private') {
    const der = key.export({ type: 'pkcs8', format: 'der' });
    return crypto.subtle.importKey('pkcs8', der, algorithm, false, ['sign']);
  }
  const der = key.export({ type: 'spki', format: 'der' });
  return crypto.subtle.importKey('spki', der, algorithm, true, ['verify']);
}

function randomSerial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = bytes[0]! & 0x7f; // positive INTEGER
  return Buffer.from(bytes).toString('hex');
}
