import 'reflect-metadata';
import { X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as x509 from '@peculiar/x509';
import * as pkijs from 'pkijs';
import { bytesEqual, childAt, oidOf, originalBytes, parseDer } from './der.js';
import { signatureMatches } from './verify-signature-value.js';

export interface ValidateCertificateChainOptions {
  certificate: Uint8Array;
  /** Certificates that may complete the chain (from the CMS, the DSS). */
  intermediates: Uint8Array[];
  /** Trusted roots (the dev CA's root, an operator's list). */
  trustAnchors: Uint8Array[];
  /** When the chain must be valid: the signature timestamp's time when there is one, else now. */
  at: Date;
  crls?: Uint8Array[];
  ocsps?: Uint8Array[];
}

export type RevocationStatus = 'good' | 'revoked' | 'unknown';

export interface ChainValidation {
  /** The chain ends at a trust anchor, every link verifies and is valid at `at`. */
  trusted: boolean;
  /** Leaf first, as far as it could be built. */
  chain: Uint8Array[];
  /** Revocation of the certificates below the anchor: good only when every one has a good answer. */
  revocation: RevocationStatus;
  /** Where the revocation answers came from. */
  revocationSources: ('crl' | 'ocsp')[];
  /** The answer found for each certificate below the anchor that has one: which CRL or OCSP response said what. */
  revocationAnswers: RevocationAnswer[];
  problems: string[];
}

/** One certificate's revocation answer, with the CRL or OCSP response (DER) that gave it. */
export interface RevocationAnswer {
  certificate: Uint8Array;
  status: RevocationStatus;
  source: 'crl' | 'ocsp';
  der: Uint8Array;
  /** thisUpdate of the CRL, producedAt of the OCSP response. */
  issuedAt?: Date;
}

/**
 * Builds and checks a certificate path to a trust anchor: each signature, each validity period at
 * `at`, CA flags, then revocation from the CRLs and OCSP responses at hand (no network: the DSS or
 * the caller provides them).
 *
 * ```ts
 * const result = await validateCertificateChain({ certificate, intermediates: cms.certificates, trustAnchors: [root], at: new Date() });
 * ```
 */
export async function validateCertificateChain(
  options: ValidateCertificateChainOptions,
): Promise<ChainValidation> {
  const problems: string[] = [];
  const pool = [...options.intermediates, ...options.trustAnchors].map((der) => ({
    der,
    cert: new X509Certificate(der),
  }));
  const isAnchor = (der: Uint8Array): boolean =>
    options.trustAnchors.some((anchor) => bytesEqual(anchor, der));
  const chain: Uint8Array[] = [options.certificate];
  let current = new X509Certificate(options.certificate);
  let trusted = false;
  for (let depth = 0; depth < 10; depth++) {
    if (!validAt(current, options.at))
      problems.push(`${subject(current)} is not valid at ${options.at.toISOString()}`);
    if (isAnchor(chain[chain.length - 1]!)) {
      trusted = true;
      break;
    }
    const issuer = pool.find(
      (candidate) =>
        candidate.cert.fingerprint256 !== current.fingerprint256 &&
        current.checkIssued(candidate.cert) &&
        current.verify(candidate.cert.publicKey),
    );
    if (!issuer) {
      const selfSigned = current.checkIssued(current) && current.verify(current.publicKey);
      problems.push(
        selfSigned
          ? `The chain ends at ${subject(current)}, which is not a trusted root`
          : `The issuer of ${subject(current)} is not available`,
      );
      break;
    }
    if (!issuer.cert.ca) problems.push(`${subject(issuer.cert)} is not a CA certificate`);
    chain.push(issuer.der);
    current = issuer.cert;
  }
  if (!trusted && problems.length === 0) problems.push('The certificate chain is too long');

  const revocationSources = new Set<'crl' | 'ocsp'>();
  const revocationAnswers: RevocationAnswer[] = [];
  let revocation: RevocationStatus = 'good';
  for (let i = 0; i < chain.length - 1; i++) {
    const answer = await revocationOf(chain[i]!, chain[i + 1]!, options);
    const status = answer?.status ?? 'unknown';
    if (answer) {
      revocationSources.add(answer.source);
      revocationAnswers.push(answer);
    }
    if (status === 'revoked') {
      problems.push(`${subject(new X509Certificate(chain[i]!))} is revoked`);
      revocation = 'revoked';
    } else if (status === 'unknown' && revocation === 'good') revocation = 'unknown';
  }
  if (chain.length === 1) revocation = isAnchor(chain[0]!) ? 'good' : 'unknown';
  return {
    trusted: trusted && problems.length === 0,
    chain,
    revocation,
    revocationSources: [...revocationSources],
    revocationAnswers,
    problems,
  };
}

/**
 * The revocation status of one certificate from the CRLs and OCSP responses at hand, each checked
 * against `issuer` (a CRL it signed, an OCSP answer it or its delegate signed, for this certificate):
 * what verification concludes, and what signing uses to decide whether fetched data proves the
 * certificate good before embedding it. `at` is when it must not yet have been revoked.
 *
 * ```ts
 * const { status, source } = await revocationStatus({ certificate, issuer, ocsps: [answer], at: new Date() });
 * ```
 */
export async function revocationStatus(options: {
  certificate: Uint8Array;
  issuer: Uint8Array;
  crls?: Uint8Array[];
  ocsps?: Uint8Array[];
  at: Date;
}): Promise<{ status: RevocationStatus; source?: 'crl' | 'ocsp' }> {
  const answer = await revocationOf(options.certificate, options.issuer, options);
  return answer ? { status: answer.status, source: answer.source } : { status: 'unknown' };
}

/** The first CRL or OCSP response that speaks for `certificate`, checked against `issuer`; undefined when none does. */
async function revocationOf(
  certificate: Uint8Array,
  issuer: Uint8Array,
  options: Pick<ValidateCertificateChainOptions, 'crls' | 'ocsps' | 'at'>,
): Promise<RevocationAnswer | undefined> {
  const cert = new x509.X509Certificate(certificate);
  for (const der of options.crls ?? []) {
    try {
      const crl = new x509.X509Crl(der);
      if (crl.issuer !== cert.issuer) continue;
      if (!crlSignedBy(der, issuer)) continue;
      const entry = crl.findRevoked(cert);
      const status = entry && entry.revocationDate <= options.at ? 'revoked' : 'good';
      return { certificate, status, source: 'crl', der, issuedAt: crl.thisUpdate };
    } catch {
      continue;
    }
  }
  for (const der of options.ocsps ?? []) {
    try {
      const response = pkijs.OCSPResponse.fromBER(der);
      const bytes = response.responseBytes;
      if (!bytes) continue;
      const basic = pkijs.BasicOCSPResponse.fromBER(bytes.response.valueBlock.valueHexView);
      // The responder is the issuer itself or a delegate it certified (RFC 6960 4.2.2.2).
      if (!ocspSignedBy(basic, issuer)) continue;
      const status = await response.getCertificateStatus(
        pkijs.Certificate.fromBER(certificate),
        pkijs.Certificate.fromBER(issuer),
      );
      if (!status.isForCertificate) continue;
      // pkijs: 0 good, 1 revoked, 2 unknown.
      return {
        certificate,
        status: status.status === 0 ? 'good' : status.status === 1 ? 'revoked' : 'unknown',
        source: 'ocsp',
        der,
        issuedAt: basic.tbsResponseData.producedAt,
      };
    } catch {
      continue;
    }
  }
  return undefined;
}

/**
 * Checks an OCSP answer's signature (RFC 6960 4.2.2.2): made by the issuer itself, or by a responder
 * certificate the issuer signed for OCSP signing (id-kp-OCSPSigning) that the answer carries. pkijs's
 * own check wants the issuer's whole chain up to a root, which the answer does not hold.
 */
function ocspSignedBy(basic: pkijs.BasicOCSPResponse, issuer: Uint8Array): boolean {
  const issuerCert = new X509Certificate(issuer);
  const candidates: Uint8Array[] = [issuer];
  for (const cert of basic.certs ?? []) {
    const der = new Uint8Array(cert.toSchema().toBER(false));
    const delegate = new X509Certificate(der);
    const forOcsp = (delegate.keyUsage ?? []).includes('1.3.6.1.5.5.7.3.9');
    if (forOcsp && delegate.checkIssued(issuerCert) && delegate.verify(issuerCert.publicKey))
      candidates.push(der);
  }
  const signature = new Uint8Array(basic.signature.valueBlock.valueHexView);
  return candidates.some((certificate) =>
    signatureMatches({
      certificate,
      data: basic.tbsResponseData.tbsView,
      signature,
      signatureAlgorithmOid: basic.signatureAlgorithm.algorithmId,
    }),
  );
}

/**
 * Checks a CRL's signature with node's crypto (RSA and ECDSA alike); @peculiar/x509's own check
 * refuses ECDSA-signed CRLs that OpenSSL accepts.
 */
function crlSignedBy(crl: Uint8Array, issuer: Uint8Array): boolean {
  const list = parseDer(crl, 'CRL');
  const signature = childAt(list, 2, 'CRL signature');
  if (!(signature instanceof asn1js.BitString)) return false;
  return signatureMatches({
    certificate: issuer,
    data: originalBytes(childAt(list, 0, 'tbsCertList')),
    signature: new Uint8Array(signature.valueBlock.valueHexView),
    signatureAlgorithmOid: oidOf(
      childAt(childAt(list, 1, 'CRL algorithm'), 0, 'CRL algorithm'),
      'CRL algorithm',
    ),
  });
}

function validAt(certificate: X509Certificate, at: Date): boolean {
  return new Date(certificate.validFrom) <= at && at <= new Date(certificate.validTo);
}

function subject(certificate: X509Certificate): string {
  return /CN=([^\n]*)/.exec(certificate.subject)?.[1] ?? certificate.subject.replace(/\n/g, ', ');
}
