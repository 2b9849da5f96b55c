import 'reflect-metadata';
import type { X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as x509 from '@peculiar/x509';
import * as pkijs from 'pkijs';
import { bytesEqual, childAt, oidOf, originalBytes, parseDer } from './der.js';
import { ValidationCache } from './validation-cache.js';
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
  /** Parses and checks shared with the other chains of the same file (verifyPdf makes one per file). */
  cache?: ValidationCache;
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
  const cache = options.cache ?? new ValidationCache();
  const problems: string[] = [];
  const pool = [...options.intermediates, ...options.trustAnchors].map((der) => ({
    der,
    cert: cache.certificate(der),
  }));
  const isAnchor = (der: Uint8Array): boolean =>
    options.trustAnchors.some((anchor) => bytesEqual(anchor, der));
  const chain: Uint8Array[] = [options.certificate];
  let current = cache.certificate(options.certificate);
  let trusted = false;
  for (let depth = 0; depth < 10; depth++) {
    if (!validAt(current, options.at))
      problems.push(`${subject(current)} is not valid at ${options.at.toISOString()}`);
    const currentDer = chain[chain.length - 1]!;
    if (isAnchor(currentDer)) {
      trusted = true;
      break;
    }
    const issuer = pool.find(
      (candidate) =>
        candidate.cert.fingerprint256 !== current.fingerprint256 &&
        issuedBy(currentDer, candidate.der, cache),
    );
    if (!issuer) {
      const selfSigned = issuedBy(currentDer, currentDer, cache);
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
    const answer = await revocationOf(chain[i]!, chain[i + 1]!, options, cache);
    const status = answer?.status ?? 'unknown';
    if (answer) {
      revocationSources.add(answer.source);
      revocationAnswers.push(answer);
    }
    if (status === 'revoked') {
      problems.push(`${subject(cache.certificate(chain[i]!))} is revoked`);
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
  const answer = await revocationOf(options.certificate, options.issuer, options, new ValidationCache());
  return answer ? { status: answer.status, source: answer.source } : { status: 'unknown' };
}

/**
 * Whether `issuer` issued `certificate`: its name is the certificate's issuer and its key verifies the
 * certificate's signature.
 */
function issuedBy(certificate: Uint8Array, issuer: Uint8Array, cache: ValidationCache): boolean {
  return cache.remember('issued', [certificate, issuer], () => {
    const child = cache.certificate(certificate);
    const parent = cache.certificate(issuer);
    return child.checkIssued(parent) && child.verify(parent.publicKey);
  });
}

/** The first CRL or OCSP response that speaks for `certificate`, checked against `issuer`; undefined when none does. */
async function revocationOf(
  certificate: Uint8Array,
  issuer: Uint8Array,
  options: Pick<ValidateCertificateChainOptions, 'crls' | 'ocsps' | 'at'>,
  cache: ValidationCache,
): Promise<RevocationAnswer | undefined> {
  for (const der of options.crls ?? []) {
    const entry = cache.rememberAcross('crl', [der, certificate, issuer], () =>
      crlEntry(
        der,
        cache.remember('x509', [certificate], () => new x509.X509Certificate(certificate)),
        issuer,
        cache,
      ),
    );
    if (!entry) continue;
    const status =
      entry.revokedAt !== undefined && entry.revokedAt <= options.at.getTime() ? 'revoked' : 'good';
    return { certificate, status, source: 'crl', der, issuedAt: new Date(entry.thisUpdate) };
  }
  for (const der of options.ocsps ?? []) {
    const answer = await cache.rememberAcross('ocsp', [der, certificate, issuer], () =>
      ocspAnswer(der, certificate, issuer, cache),
    );
    if (answer)
      return { certificate, status: answer.status, source: 'ocsp', der, issuedAt: new Date(answer.issuedAt) };
  }
  return undefined;
}

/**
 * What the CRL `der` says of the certificate `cert`, when `issuer` signed it: when it was revoked (if it is
 * listed) and the CRL's thisUpdate (ms since the epoch; frozen, as it may be shared: rememberAcross);
 * undefined when the CRL cannot be read or does not speak for it.
 */
function crlEntry(
  der: Uint8Array,
  cert: x509.X509Certificate,
  issuer: Uint8Array,
  cache: ValidationCache,
): Readonly<{ revokedAt?: number; thisUpdate: number }> | undefined {
  try {
    const crl = cache.remember('x509-crl', [der], () => new x509.X509Crl(der));
    if (crl.issuer !== cert.issuer) return undefined;
    if (!crlSignedBy(der, issuer)) return undefined;
    const entry = crl.findRevoked(cert);
    return Object.freeze({
      ...(entry ? { revokedAt: entry.revocationDate.getTime() } : {}),
      thisUpdate: crl.thisUpdate.getTime(),
    });
  } catch {
    return undefined;
  }
}

/**
 * What the OCSP response `der` says of `certificate`, when `issuer` (or its delegate) signed it and it
 * is about this certificate: the status and the producedAt (ms since the epoch; frozen, as it may be
 * shared: rememberAcross); undefined otherwise.
 */
async function ocspAnswer(
  der: Uint8Array,
  certificate: Uint8Array,
  issuer: Uint8Array,
  cache: ValidationCache,
): Promise<Readonly<{ status: RevocationStatus; issuedAt: number }> | undefined> {
  try {
    const ocsp = cache.remember('ocsp-response', [der], () => readOcspResponse(der));
    if (!ocsp) return undefined;
    // The responder is the issuer itself or a delegate it certified (RFC 6960 4.2.2.2).
    if (!cache.remember('ocsp-signer', [der, issuer], () => ocspSignedBy(ocsp.basic, issuer, cache)))
      return undefined;
    // OCSPResponse.getCertificateStatus would parse the basic response again; it answers this for any other type.
    if (ocsp.response.responseBytes?.responseType !== pkijs.id_PKIX_OCSP_Basic) return undefined;
    const status = await ocsp.basic.getCertificateStatus(
      cache.remember('pkijs-certificate', [certificate], () => pkijs.Certificate.fromBER(certificate)),
      cache.remember('pkijs-certificate', [issuer], () => pkijs.Certificate.fromBER(issuer)),
    );
    if (!status.isForCertificate) return undefined;
    // pkijs: 0 good, 1 revoked, 2 unknown.
    return Object.freeze({
      status: status.status === 0 ? 'good' : status.status === 1 ? 'revoked' : 'unknown',
      issuedAt: ocsp.basic.tbsResponseData.producedAt.getTime(),
    });
  } catch {
    return undefined;
  }
}

/** An OCSP response and its basic response; undefined when it carries none. */
function readOcspResponse(
  der: Uint8Array,
): { response: pkijs.OCSPResponse; basic: pkijs.BasicOCSPResponse } | undefined {
  const response = pkijs.OCSPResponse.fromBER(der);
  const bytes = response.responseBytes;
  if (!bytes) return undefined;
  return { response, basic: pkijs.BasicOCSPResponse.fromBER(bytes.response.valueBlock.valueHexView) };
}

/**
 * Checks an OCSP answer's signature (RFC 6960 4.2.2.2): made by the issuer itself, or by a responder
 * certificate the issuer signed for OCSP signing (id-kp-OCSPSigning) that the answer carries. pkijs's
 * own check wants the issuer's whole chain up to a root, which the answer does not hold.
 */
function ocspSignedBy(basic: pkijs.BasicOCSPResponse, issuer: Uint8Array, cache: ValidationCache): boolean {
  const issuerCert = cache.certificate(issuer);
  const candidates: Uint8Array[] = [issuer];
  for (const cert of basic.certs ?? []) {
    const der = new Uint8Array(cert.toSchema().toBER(false));
    const delegate = cache.certificate(der);
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
