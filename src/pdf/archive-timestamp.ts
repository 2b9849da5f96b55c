import { X509Certificate } from 'node:crypto';
import type { DigestAlgorithm } from '../pki/algorithms.js';
import { certificateFields } from '../pki/certificate-fields.js';
import { bytesEqual } from '../pki/der.js';
import { CertificateRevoked, RevocationUnavailable, TimestampUnavailable } from '../pki/errors.js';
import type { ValidationMaterial } from '../pki/revocation-fetcher.js';
import { readTimestampToken } from '../pki/timestamp-token.js';
import { revocationStatus } from '../pki/validate-certificate-chain.js';
import { documentTimestampUpdate } from './add-document-timestamp.js';
import { validationDataUpdate } from './add-validation-data.js';
import { PdfInvalid } from './errors.js';
import { findSignatures, readDss } from './find-signatures.js';
import type { TsaOptions } from './finish-signature.js';
import { updatePdf } from './appendable-pdf.js';
import { appendedSource, memorySource, type ByteSource } from './reader/byte-source.js';

/** Where the revocation data of a chain comes from: fetched (RevocationFetcher.collect), or given. */
export interface RevocationSource {
  revocation?: ((chains: Uint8Array[][], now: Date) => Promise<ValidationMaterial>) | undefined;
  validationData?: { certificates?: Uint8Array[]; crls?: Uint8Array[]; ocsps?: Uint8Array[] } | undefined;
}

/**
 * The newest archive timestamp of a file and until when it proves the file: the end of its TSA
 * certificate's validity, or its own time when its algorithms are too weak to rely on (a SHA-1
 * imprint, an RSA key under 2048 bits, an EC key under 256 bits), so that it is due at once. A
 * B-LTA file is renewed (renewArchive) some time before `expiresAt`.
 */
export interface ArchiveExpiry {
  genTime: Date;
  expiresAt: Date;
  /** Why it is due before its certificate expires, when it is. */
  weakness?: string;
}

/**
 * The document timestamp of PAdES B-LTA over a file whose DSS already holds `material`, and the
 * validation data of the timestamp's own chain when it is not in the DSS yet (usually the same TSA):
 * answers the bytes those updates append to `pdf`. Throws `TimestampUnavailable` or
 * `RevocationUnavailable`; callers fall back or fail.
 */
export async function archiveTimestamp(
  pdf: ByteSource,
  material: ValidationMaterial,
  options: RevocationSource & { tsa: TsaOptions; digestAlgorithm: DigestAlgorithm; now: Date },
): Promise<{ appended: Buffer; archive: ArchiveExpiry }> {
  const archived = await documentTimestampUpdate({
    pdf,
    tsa: options.tsa,
    digestAlgorithm: options.digestAlgorithm,
  });
  if (!archived.tsaCertificate)
    throw new TimestampUnavailable('The document timestamp names no TSA certificate');
  const archive = archiveExpiry(archived.token);
  const archiveChain = certificateChain(archived.tsaCertificate, archived.tsaCertificates);
  const timestamped = archived.written.tail;
  if (proved(archiveChain, material)) return { appended: timestamped, archive };
  const more = await validationMaterial([archiveChain], options, options.now);
  const { tail } = await validationDataUpdate({
    pdf: appendedSource(pdf, timestamped),
    ...more,
    vriFor: [archived.token],
  });
  return { appended: Buffer.concat([timestamped, tail]), archive };
}

/**
 * Renews the archive of a B-LTA file (ETSI EN 319 142-1 5.5, the "LTA" cycle) in two incremental
 * updates: fresh validation data for the chain of its newest document timestamp in the DSS (with a
 * VRI entry for that token), then a new document timestamp over everything, itself proved as in
 * archiveTimestamp. Earlier signatures and timestamps stay valid; the file now proves itself until
 * the new timestamp's `expiresAt`. A revoked TSA certificate fails it (`CertificateRevoked`); revocation
 * data or a TSA that cannot be had fail it too (`RevocationUnavailable`, `TimestampUnavailable`): the
 * file is left as it is and tried again later.
 *
 * ```ts
 * const { pdf: renewed, archive } = await renewArchive({ pdf, tsa: { url }, revocation: fetcher.collect, now });
 * ```
 */
export async function renewArchive(
  options: RevocationSource & {
    pdf: Uint8Array;
    tsa: TsaOptions;
    digestAlgorithm?: DigestAlgorithm;
    now: Date;
  },
): Promise<{ pdf: Uint8Array; archive: ArchiveExpiry }> {
  const source = memorySource(options.pdf);
  const { newest, dss } = await updatePdf(source, (opened) => ({
    newest: findSignatures({ opened })
      .filter((s) => s.type === 'DocTimeStamp')
      .at(-1),
    dss: readDss({ opened }),
  }));
  if (!newest) throw new PdfInvalid('The file has no archive (document) timestamp to renew');
  const token = readTimestampToken({ token: newest.contents });
  if (!token.tsaCertificate) throw new PdfInvalid('The newest document timestamp names no TSA certificate');
  const pool = [...token.certificates, ...(dss?.certificates ?? [])];
  const chain = certificateChain(token.tsaCertificate, pool);
  const material = await validationMaterial([chain], options, options.now);
  const { tail } = await validationDataUpdate({ pdf: source, ...material, vriFor: [newest.contents] });
  const { appended, archive } = await archiveTimestamp(appendedSource(source, tail), material, {
    ...options,
    digestAlgorithm: options.digestAlgorithm ?? 'SHA-256',
  });
  return { pdf: new Uint8Array(Buffer.concat([options.pdf, tail, appended])), archive };
}

/** Until when a document timestamp token proves what it covers (see ArchiveExpiry). */
export function archiveExpiry(token: Uint8Array): ArchiveExpiry {
  const info = readTimestampToken({ token });
  if (!info.tsaCertificate) throw new TimestampUnavailable('The document timestamp names no TSA certificate');
  const certificate = new X509Certificate(info.tsaCertificate);
  const weakness = weaknessOf(info.hashAlgorithm, certificate);
  return {
    genTime: info.genTime,
    expiresAt: weakness ? info.genTime : new Date(certificate.validTo),
    ...(weakness ? { weakness } : {}),
  };
}

function weaknessOf(hash: string | undefined, certificate: X509Certificate): string | undefined {
  if (hash === undefined || hash === 'SHA-1') return `its imprint uses ${hash ?? 'an unknown hash'}`;
  const key = certificate.publicKey;
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if (key.asymmetricKeyType === 'rsa' && bits !== undefined && bits < 2048)
    return `its TSA key is RSA-${bits}`;
  const curve = key.asymmetricKeyDetails?.namedCurve;
  if (key.asymmetricKeyType === 'ec' && curve && !['prime256v1', 'secp384r1', 'secp521r1'].includes(curve)) {
    return `its TSA key is on ${curve}`;
  }
  return undefined;
}

/**
 * The revocation data of `chains`: fetched (`options.revocation`) or as the caller gave it, and in
 * either case checked to prove every certificate below each root good at `now` before it is embedded.
 */
export async function validationMaterial(
  chains: Uint8Array[][],
  options: RevocationSource,
  now: Date,
): Promise<ValidationMaterial> {
  const given = options.validationData;
  const material = options.revocation
    ? await options.revocation(chains, now)
    : { certificates: chains.flat(), crls: given?.crls ?? [], ocsps: given?.ocsps ?? [] };
  material.certificates.push(...(given?.certificates ?? []));
  for (const chain of chains) {
    for (const [i, certificate] of chain.slice(0, -1).entries()) {
      const { status } = await revocationStatus({ certificate, issuer: chain[i + 1]!, ...material, at: now });
      if (status === 'revoked')
        throw new CertificateRevoked(
          `The certificate ${certificateFields(certificate).commonName} is revoked`,
        );
      if (status !== 'good')
        throw new RevocationUnavailable(
          `No revocation data for ${certificateFields(certificate).commonName}: the level stays below B-LT`,
        );
    }
  }
  return material;
}

/** Whether every certificate of `chain` is in the material already (then its revocation data is too). */
export function proved(chain: Uint8Array[], material: ValidationMaterial): boolean {
  return chain.every((der) => material.certificates.some((c) => bytesEqual(c, der)));
}

/**
 * `certificate` and its issuers out of `pool`, leaf first, as far as they go (a self-signed root ends
 * it): the chain whose revocation a B-LT must prove.
 */
export function certificateChain(certificate: Uint8Array, pool: Uint8Array[]): Uint8Array[] {
  const chain = [certificate];
  for (let current = new X509Certificate(certificate); chain.length < 10;) {
    if (current.checkIssued(current)) break;
    const issuer = pool.find((der) => {
      const candidate = new X509Certificate(der);
      return candidate.fingerprint256 !== current.fingerprint256 && current.checkIssued(candidate);
    });
    if (!issuer) break;
    chain.push(issuer);
    current = new X509Certificate(issuer);
  }
  return chain;
}
