import 'reflect-metadata';
import { X509Certificate } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { digest } from './algorithms.js';
import { CertificateRevoked, RevocationUnavailable, SealCertificateRevoked } from './errors.js';
import { ocspRequest, ocspValidity } from './ocsp.js';
import type { RevocationTransport } from './revocation-transport.js';
import { revocationUrls } from './revocation-urls.js';
import { revocationStatus } from './validate-certificate-chain.js';

/** The material of a DSS (PAdES B-LT): certificates, CRLs and OCSP responses, DER. */
export interface ValidationMaterial {
  certificates: Uint8Array[];
  crls: Uint8Array[];
  ocsps: Uint8Array[];
}

/**
 * Answers for certificates this installation issued itself (the development CA): made in-process, as
 * its responder under PUBLIC_URL would make them, so no request goes out to our own address.
 */
export interface LocalRevocation {
  /** An OCSP response for `certificate`, or undefined when it is not one of ours. */
  ocsp(certificate: Uint8Array, issuer: Uint8Array, now: Date): Promise<Uint8Array | undefined>;
}

/**
 * The revocation status of a signing key's chain right before it signs (RevocationFetcher.beforeSigning):
 * the answers that proved it good (to be signed into the CMS), and why it could not be proved for a
 * certificate that names a responder (said in the signing call's answer).
 */
export interface SignerStatus {
  crls: Uint8Array[];
  ocsps: Uint8Array[];
  warnings: string[];
}

/**
 * A chain's revocation answers fetched for verification (RevocationFetcher.currentStatus), and for each
 * certificate below the top that got none, why.
 */
export interface CurrentStatus {
  crls: Uint8Array[];
  ocsps: Uint8Array[];
  problems: string[];
}

/** How long a signer's status is reused: a seal burst asks once, a revocation is seen within minutes. */
export const SIGNER_STATUS_TTL_MS = 5 * 60_000;
/** How long "the responder could not be reached" is reused before asking again. */
export const SIGNER_STATUS_UNAVAILABLE_TTL_MS = 30_000;

interface Evidence {
  kind: 'ocsp' | 'crl';
  der: Uint8Array;
  /** Until when the answer may be reused (its nextUpdate); undefined: not cached. */
  until?: Date | undefined;
}

/**
 * Fetches the revocation data of certificate chains for PAdES B-LT (issue 23): for each certificate
 * below a root, an OCSP response from the responders its AIA names (preferred), else a CRL from its
 * distribution points; each answer verified against the issuer, current, and proving the certificate
 * good. Answers are cached for their validity period (until nextUpdate). A revoked certificate throws
 * `CertificateRevoked`; a certificate whose status cannot be proved throws `RevocationUnavailable`
 * (callers fall back to B-T and say so). Runs no database work: call it outside any transaction.
 *
 * ```ts
 * const fetcher = new RevocationFetcher({ transport, timeoutMs: 5000 });
 * const material = await fetcher.collect([[seal, intermediate, root], [tsa, root]], new Date());
 * ```
 */
export class RevocationFetcher {
  readonly #transport: RevocationTransport;
  readonly #timeoutMs: number;
  readonly #local: (() => Promise<LocalRevocation | undefined>) | undefined;
  readonly #byCertificate = new Map<string, Evidence>();
  readonly #crlByUrl = new Map<string, Evidence>();
  readonly #signerStatus = new Map<string, { until: number; status: Promise<SignerStatus> }>();

  constructor(options: {
    transport: RevocationTransport;
    timeoutMs: number;
    local?: () => Promise<LocalRevocation | undefined>;
  }) {
    this.#transport = options.transport;
    this.#timeoutMs = options.timeoutMs;
    this.#local = options.local;
  }

  /** The validation material of `chains` (each leaf first, ending at a self-signed root) at `now`. */
  async collect(chains: Uint8Array[][], now: Date): Promise<ValidationMaterial> {
    const material: ValidationMaterial = { certificates: [], crls: [], ocsps: [] };
    const seen = new Set<string>();
    for (const chain of chains) {
      const last = chain[chain.length - 1];
      if (!last || !selfSigned(last)) {
        throw new RevocationUnavailable(
          `The chain of ${subjectOf(chain[0])} does not reach its root: its revocation cannot be proved`,
        );
      }
      for (const [i, certificate] of chain.entries()) {
        const id = fingerprint(certificate);
        if (seen.has(id)) continue;
        seen.add(id);
        material.certificates.push(certificate);
        const issuer = chain[i + 1];
        if (!issuer) continue; // the root: trusted as itself, nothing revokes it
        const evidence = await this.#evidenceFor(certificate, issuer, now);
        if (evidence.kind === 'ocsp') material.ocsps.push(evidence.der);
        else if (!material.crls.some((crl) => Buffer.compare(crl, evidence.der) === 0))
          material.crls.push(evidence.der);
      }
    }
    return material;
  }

  /**
   * Checks a signing key's chain (leaf first, as far as it is known) before the key signs (issue 38):
   * each certificate below the top that names an OCSP responder or a CRL (or that the dev CA answers
   * for) is asked about. A revoked one throws `SealCertificateRevoked`: the key never signs. One whose
   * status cannot be had (the responder down, a stale answer) is a warning, and the signature goes on
   * without that evidence. The outcome is kept for SIGNER_STATUS_TTL_MS (no longer than the answers
   * are valid; SIGNER_STATUS_UNAVAILABLE_TTL_MS when something could not be had), so a burst of seals
   * asks once. A certificate naming no address is not asked.
   *
   * ```ts
   * const { ocsps, crls, warnings } = await fetcher.beforeSigning([signer.certificate, ...signer.chain], new Date());
   * ```
   */
  beforeSigning(chain: Uint8Array[], now: Date): Promise<SignerStatus> {
    const key = chain.map(fingerprint).join(':');
    const cached = this.#signerStatus.get(key);
    if (cached && cached.until > now.getTime()) return cached.status;
    const entry = { until: now.getTime() + SIGNER_STATUS_TTL_MS, status: this.#statusOf(chain, now) };
    this.#signerStatus.set(key, entry);
    entry.status.then(
      (status) => {
        if (status.warnings.length > 0) entry.until = now.getTime() + SIGNER_STATUS_UNAVAILABLE_TTL_MS;
      },
      (error: unknown) => {
        // A revoked key stays refused; anything else is asked again next time.
        if (!(error instanceof SealCertificateRevoked) && this.#signerStatus.get(key) === entry)
          this.#signerStatus.delete(key);
      },
    );
    return entry.status;
  }

  /**
   * The revocation status of a chain at `now` for verification (VERIFY_FETCH_REVOCATION): for each
   * certificate below the top, an answer from the responders or CRLs it names, whatever it says (a
   * revoked certificate's answer is returned, for the verifier to judge), and why none could be had
   * for the others. The chain must already be trusted: only addresses that a trusted CA signed into
   * its certificates are asked, under the revocation fetches' SSRF rules.
   *
   * ```ts
   * const { crls, ocsps, problems } = await fetcher.currentStatus(chain.chain, new Date());
   * ```
   */
  async currentStatus(chain: Uint8Array[], now: Date): Promise<CurrentStatus> {
    const status: CurrentStatus = { crls: [], ocsps: [], problems: [] };
    for (const [i, certificate] of chain.entries()) {
      const issuer = chain[i + 1];
      if (!issuer) break;
      let evidence: Evidence | undefined;
      try {
        evidence = await this.#evidenceFor(certificate, issuer, now, { optional: true, revokedToo: true });
      } catch (error) {
        if (!(error instanceof RevocationUnavailable)) throw error;
        status.problems.push(error.message.slice(0, 300));
        continue;
      }
      if (!evidence) {
        status.problems.push(`${subjectOf(certificate)} names no OCSP responder and no CRL`);
        continue;
      }
      if (evidence.kind === 'ocsp') status.ocsps.push(evidence.der);
      else if (!status.crls.some((crl) => Buffer.compare(crl, evidence.der) === 0))
        status.crls.push(evidence.der);
    }
    return status;
  }

  async #statusOf(chain: Uint8Array[], now: Date): Promise<SignerStatus> {
    const status: SignerStatus = { crls: [], ocsps: [], warnings: [] };
    let until = Infinity;
    for (const [i, certificate] of chain.entries()) {
      const issuer = chain[i + 1];
      if (!issuer) break; // the top: a root, or a certificate whose issuer the key does not carry
      let evidence: Evidence | undefined;
      try {
        evidence = await this.#evidenceFor(certificate, issuer, now, { optional: true });
      } catch (error) {
        if (error instanceof CertificateRevoked)
          throw new SealCertificateRevoked(
            `The signing key's certificate ${subjectOf(certificate)} is revoked (${error.message.includes('(OCSP)') ? 'OCSP' : 'CRL'}): it signs nothing until it is replaced`,
          );
        if (!(error instanceof RevocationUnavailable)) throw error;
        status.warnings.push(
          `The revocation status of the signing certificate ${subjectOf(certificate)} could not be checked before signing (${error.message.slice(0, 300)}); the signature carries no proof of it`,
        );
        continue;
      }
      if (!evidence) continue;
      if (evidence.until) until = Math.min(until, evidence.until.getTime());
      if (evidence.kind === 'ocsp') status.ocsps.push(evidence.der);
      else if (!status.crls.some((crl) => Buffer.compare(crl, evidence.der) === 0))
        status.crls.push(evidence.der);
    }
    // Never reused past the answers' own validity.
    const cached = this.#signerStatus.get(chain.map(fingerprint).join(':'));
    if (cached && until < cached.until) cached.until = until;
    return status;
  }

  async #evidenceFor(
    certificate: Uint8Array,
    issuer: Uint8Array,
    now: Date,
    options: { optional: true; revokedToo?: true },
  ): Promise<Evidence | undefined>;
  async #evidenceFor(certificate: Uint8Array, issuer: Uint8Array, now: Date): Promise<Evidence>;
  async #evidenceFor(
    certificate: Uint8Array,
    issuer: Uint8Array,
    now: Date,
    options?: { optional: true; revokedToo?: true },
  ): Promise<Evidence | undefined> {
    const id = fingerprint(certificate);
    const cached = this.#byCertificate.get(id);
    if (cached?.until && cached.until > now) return cached;
    const reasons: string[] = [];
    const local = await (await this.#local?.())?.ocsp(certificate, issuer, now);
    const candidates: (() => Promise<Evidence>)[] = [];
    if (local) candidates.push(async () => ocspEvidence(local));
    const urls = revocationUrls(certificate);
    for (const url of urls.ocsp) {
      candidates.push(async () => {
        const body = await ocspRequest(certificate, issuer);
        const der = await this.#transport(url, {
          method: 'POST',
          body,
          contentType: 'application/ocsp-request',
          timeoutMs: this.#timeoutMs,
        });
        return ocspEvidence(der);
      });
    }
    for (const url of urls.crl) candidates.push(() => this.#crl(url, now));
    if (candidates.length === 0) {
      if (options?.optional) return undefined;
      reasons.push('it names no OCSP responder and no CRL');
    }
    for (const candidate of candidates) {
      let evidence: Evidence;
      try {
        evidence = await candidate();
      } catch (error) {
        reasons.push(error instanceof Error ? error.message : String(error));
        continue;
      }
      const { status } = await revocationStatus({
        certificate,
        issuer,
        ...(evidence.kind === 'ocsp' ? { ocsps: [evidence.der] } : { crls: [evidence.der] }),
        at: now,
      });
      if (status === 'revoked') {
        if (options?.revokedToo) return evidence;
        throw new CertificateRevoked(
          `The certificate ${subjectOf(certificate)} is revoked (${evidence.kind === 'ocsp' ? 'OCSP' : 'CRL'}): nothing was signed`,
        );
      }
      if (status === 'unknown') {
        reasons.push(`the ${evidence.kind === 'ocsp' ? 'OCSP responder' : 'CRL'} does not vouch for it`);
        continue;
      }
      if (evidence.until && evidence.until <= now) {
        reasons.push(`the ${evidence.kind === 'ocsp' ? 'OCSP response' : 'CRL'} is out of date`);
        continue;
      }
      if (evidence.until) this.#byCertificate.set(id, evidence);
      return evidence;
    }
    throw new RevocationUnavailable(
      `No revocation data for ${subjectOf(certificate)}: ${reasons.join('; ').slice(0, 500)}`,
    );
  }

  /** A CRL by its address, shared by every certificate it covers while it is current. */
  async #crl(url: string, now: Date): Promise<Evidence> {
    const cached = this.#crlByUrl.get(url);
    if (cached?.until && cached.until > now) return cached;
    const der = await this.#transport(url, { method: 'GET', timeoutMs: this.#timeoutMs });
    let crl: x509.X509Crl;
    try {
      crl = new x509.X509Crl(der);
    } catch {
      throw new Error('the CRL cannot be read');
    }
    const evidence: Evidence = { kind: 'crl', der, until: crl.nextUpdate };
    if (crl.nextUpdate) this.#crlByUrl.set(url, evidence);
    return evidence;
  }
}

function ocspEvidence(der: Uint8Array): Evidence {
  let validity: { nextUpdate?: Date };
  try {
    validity = ocspValidity(der);
  } catch (error) {
    throw new Error(
      `the OCSP response cannot be read (${error instanceof Error ? error.message : 'unknown'})`,
    );
  }
  return { kind: 'ocsp', der, until: validity.nextUpdate };
}

function selfSigned(der: Uint8Array): boolean {
  const cert = new X509Certificate(der);
  return cert.checkIssued(cert) && cert.verify(cert.publicKey);
}

function fingerprint(der: Uint8Array): string {
  return Buffer.from(digest('SHA-256', der)).toString('hex');
}

function subjectOf(der: Uint8Array | undefined): string {
  if (!der) return 'a certificate';
  const cert = new X509Certificate(der);
  return /CN=([^\n]*)/.exec(cert.subject)?.[1] ?? cert.subject.replace(/\n/g, ', ');
}
