import { digest } from '../pki/algorithms.js';
import { certificateFields, type CertificateFields } from '../pki/certificate-fields.js';
import { readSignedData, type SignedDataContents } from '../pki/cms/read-signed-data.js';
import { verifySignedData } from '../pki/cms/verify-signed-data.js';
import { bytesEqual } from '../pki/der.js';
import { readTimestampToken, type TimestampTokenInfo } from '../pki/timestamp-token.js';
import { ValidationCache } from '../pki/validation-cache.js';
import {
  validateCertificateChain,
  type ChainValidation,
  type RevocationStatus,
} from '../pki/validate-certificate-chain.js';
import {
  findSignatures,
  readDss,
  type DocumentSecurityStore,
  type FoundSignature,
} from './find-signatures.js';
import { pdfBytes, readPdf, type AppendablePdf } from './appendable-pdf.js';
import {
  analyseRevisions,
  eofOffsets,
  eolAfter,
  isAllowedAfterSignature,
  modificationsAfter,
  type Modification,
  type RevisionChanges,
} from './difference-analysis.js';
import type { PadesLevel } from './sign-pdf.js';
import { validationReports, type ValidationReports } from './validation-report.js';
import { isHexRun, zeroPaddedHex } from './reader/hex.js';
import type { ByteRange } from './writer/signature-placeholder.js';
import type { CurrentStatus } from '../pki/revocation-fetcher.js';

export interface VerifyPdfOptions {
  /** The bytes, or the PDF read from them in memory (readPdf), when more than this check reads it. */
  pdf: Uint8Array | AppendablePdf;
  /** Trusted roots (e.g. the dev CA's root certificate). Without them no chain is trusted. */
  trustAnchors?: Uint8Array[];
  /** Adds `dss`: the XML reports (spec: Versioning 4, `dss` query parameter). */
  dss?: boolean;
  /** Defaults to now. */
  validationTime?: Date;
  /** Named in the reports. */
  documentName?: string;
  /**
   * Asks the responders and CRLs a trusted signer's chain names for its status now, when the file does
   * not establish it (VERIFY_FETCH_REVOCATION): answers so found are reported `foundIn: 'online'` and
   * prove no PAdES level, which only what is in the file proves.
   */
  fetchRevocation?: (chain: Uint8Array[], now: Date) => Promise<CurrentStatus>;
}

export type SignatureVerdict = 'valid' | 'changed' | 'invalid' | 'indeterminate';

/** ETSI TS 119 102-1 main indications. */
export type Indication = 'TOTAL_PASSED' | 'TOTAL_FAILED' | 'INDETERMINATE';

export interface TimestampCheck {
  genTime: string;
  valid: boolean;
  /** The token covers what it should (the signature value, or the document's byte ranges). */
  coversData: boolean;
  tsa?: string;
  /**
   * Revocation of the TSA's chain from the data in the file (the DSS, the CMS): `good` only when every
   * certificate below its root has a good answer. A B-LT needs it as much as the signer's.
   */
  revocation?: ChainValidation['revocation'];
  /** The TSA chain's revocation answers found in the file. */
  revocationData?: RevocationFound[];
  problems: string[];
}

/** A revocation answer found in the file for one certificate of a chain: what it says and where it is. */
export interface RevocationFound {
  /** Subject of the certificate it is about. */
  certificate: string;
  status: RevocationStatus;
  source: 'crl' | 'ocsp';
  /**
   * The document security store, the signature's CMS (its `crls`), or not the file at all: fetched
   * when verifying (VERIFY_FETCH_REVOCATION).
   */
  foundIn: 'dss' | 'cms' | 'online';
  /** thisUpdate of the CRL, producedAt of the OCSP response (ISO). */
  issuedAt?: string;
}

/** Revocation data a check used, with its bytes (for the reports). */
export interface RevocationEvidence {
  der: Uint8Array;
  source: 'crl' | 'ocsp';
  foundIn: RevocationFound['foundIn'];
  issuedAt?: Date;
}

export interface SignatureCheck {
  fieldName: string;
  kind: 'signature' | 'document-timestamp';
  subFilter: string;
  /** /Name of the signature dictionary. */
  signerName?: string;
  signer?: Pick<
    CertificateFields,
    'commonName' | 'subjectText' | 'issuerText' | 'notBefore' | 'notAfter' | 'sha256'
  >;
  /** /M, the claimed signing time (ISO). */
  claimedSigningTime?: string;
  reason?: string;
  location?: string;
  byteRange: number[];
  /** The byte range is well formed: starts at 0 and leaves out exactly the /Contents string. */
  byteRangeValid: boolean;
  coversWholeFile: boolean;
  /** Incremental updates appended after this signature's revision. */
  revisionsAfter: number;
  /** What each later revision changed, by the difference analysis (difference-analysis.ts). */
  modifications: Modification[];
  /**
   * This signature's own verdict: `invalid` when its byte range, digest, value or /Contents padding
   * fail (or its indication is TOTAL_FAILED); `changed` when a later revision went beyond what the
   * rules allow after a signature; `indeterminate` when the signer is not confirmed; else `valid`.
   */
  verdict: SignatureVerdict;
  /** message-digest equals the digest of the signed byte ranges. */
  digestValid: boolean;
  /** The CMS signature value verifies with the signer's certificate. */
  signatureValid: boolean;
  certificate: {
    trusted: boolean;
    chain: string[];
    revocation: ChainValidation['revocation'];
    revocationSources: ChainValidation['revocationSources'];
    /** Per certificate below the anchor that has one, the revocation answer found in the file. */
    revocationData: RevocationFound[];
    problems: string[];
  };
  /** The signature-time-stamp (B-T), or the token itself for a document timestamp. */
  timestamp?: TimestampCheck;
  /** PAdES baseline level the signature meets (undefined for a document timestamp or a non-PAdES one). */
  level?: PadesLevel;
  /** The document timestamps, not failed, added after this signature's revision (they cover it), oldest first. */
  documentTimestamps: { fieldName: string; genTime: string }[];
  indication: Indication;
  subIndication?: string;
  problems: string[];
  warnings: string[];
  /** Material for the reports. */
  evidence: {
    cms?: SignedDataContents;
    contents: Uint8Array;
    chain: Uint8Array[];
    /** The revocation data the signer's (or a document timestamp's TSA's) chain was checked with. */
    revocation: RevocationEvidence[];
    /** The revocation data the signature timestamp's TSA chain was checked with. */
    timestampRevocation: RevocationEvidence[];
    /** The signature timestamp token that was checked (the last one of the CMS). */
    timestampToken?: Uint8Array;
    /** A document timestamp's: the DSS of the revision it covers (the one before its own). */
    coveredDss?: DocumentSecurityStore;
  };
}

export interface PdfVerification {
  signatures: SignatureCheck[];
  validationTime: string;
  /** The document security store's certificates and revocation data, when the PDF has one. */
  securityStore?: DocumentSecurityStore;
  dss?: ValidationReports;
}

/**
 * Validates every signature and document timestamp of a PDF: byte range and coverage (how many
 * revisions follow), message digest, CMS signature, signing-certificate binding, certificate chain
 * to the given trust anchors with the revocation data in the CMS and the DSS, the timestamps, and
 * the PAdES level reached. A signature whose signer's revocation status the file does not establish
 * (the CMS's crls and adbe-revocationInfoArchival attribute, the DSS) is INDETERMINATE / TRY_LATER,
 * never TOTAL_PASSED (issue 38); a revoked certificate fails.
 *
 * ```ts
 * const { signatures, dss } = await verifyPdf({ pdf, trustAnchors: [devCa.rootCertificate], dss: true });
 * ```
 */
export async function verifyPdf(options: VerifyPdfOptions): Promise<PdfVerification> {
  const { pdf } = options;
  if (pdf instanceof Uint8Array) return readPdf(pdf, (opened) => verifyRead(opened, options));
  return verifyRead(pdf, options);
}

async function verifyRead(opened: AppendablePdf, options: VerifyPdfOptions): Promise<PdfVerification> {
  const validationTime = options.validationTime ?? new Date();
  const bytes = pdfBytes(opened);
  const found = findSignatures({ opened });
  const securityStore = readDss({ opened });
  const dss = securityStore ?? { certificates: [], crls: [], ocsps: [] };
  const eofs = eofOffsets(bytes);
  const trustAnchors = options.trustAnchors ?? [];
  const cache = new ValidationCache();

  // The signatures are checked together: checking an OCSP answer waits for hashes made in the thread
  // pool, and one signature's wait is another's work. A failure is the first signature's, as if one
  // by one.
  const settled = await Promise.allSettled(
    found.map((signature) =>
      checkOne({
        bytes,
        signature,
        dss,
        eofs,
        trustAnchors,
        validationTime,
        cache,
        fetchRevocation: options.fetchRevocation,
      }),
    ),
  );
  const checks = settled.map((result) => {
    if (result.status === 'rejected') throw result.reason;
    return result.value;
  });
  await detectLevels({ checks, bytes, finalDss: securityStore, trustAnchors, validationTime, eofs, cache });
  judge(checks, revisionChanges(opened, checks));
  return {
    signatures: checks,
    validationTime: validationTime.toISOString(),
    ...(securityStore ? { securityStore } : {}),
    ...(options.dss
      ? {
          dss: validationReports({
            checks,
            validationTime,
            documentName: options.documentName ?? 'document.pdf',
            ...(securityStore ? { dss: securityStore } : {}),
          }),
        }
      : {}),
  };
}

async function checkOne(context: {
  /** The whole file. */
  bytes: Uint8Array;
  signature: FoundSignature;
  dss: DocumentSecurityStore;
  eofs: number[];
  trustAnchors: Uint8Array[];
  validationTime: Date;
  cache: ValidationCache;
  fetchRevocation: VerifyPdfOptions['fetchRevocation'];
}): Promise<SignatureCheck> {
  const { signature, bytes, dss } = context;
  const problems: string[] = [];
  const warnings: string[] = [];
  const br = signature.byteRange;
  const byteRangeValid =
    br.length === 4 &&
    br.every((n) => Number.isInteger(n) && n >= 0) &&
    br[0] === 0 &&
    br[1]! < br[2]! &&
    br[2]! + br[3]! <= bytes.length &&
    bytes[br[1]!] === 0x3c &&
    bytes[br[2]! - 1] === 0x3e &&
    isHexRun(bytes, br[1]! + 1, br[2]! - 1);
  if (!byteRangeValid) problems.push('The byte range is malformed or does not frame /Contents exactly');
  const padded = byteRangeValid && zeroPadded(bytes, br, signature.contents.length);
  if (byteRangeValid && !padded) problems.push('Bytes were changed in the unused room of its /Contents');
  const coverEnd = br.length === 4 ? br[2]! + br[3]! : 0;
  // The two signed ranges, hashed where they lie rather than copied into one buffer first.
  const content = byteRangeValid ? signedRanges(bytes, br as ByteRange) : [];
  const base: Omit<
    SignatureCheck,
    | 'digestValid'
    | 'signatureValid'
    | 'certificate'
    | 'indication'
    | 'evidence'
    | 'documentTimestamps'
    | 'modifications'
    | 'verdict'
  > = {
    fieldName: signature.fieldName,
    kind: signature.type === 'DocTimeStamp' ? 'document-timestamp' : 'signature',
    subFilter: signature.subFilter,
    signerName: signature.name,
    claimedSigningTime: signature.claimedTime?.toISOString(),
    reason: signature.reason,
    location: signature.location,
    byteRange: br,
    byteRangeValid,
    coversWholeFile: coverEnd === bytes.length,
    revisionsAfter: context.eofs.filter((offset) => offset >= coverEnd).length,
    problems,
    warnings,
  };

  if (signature.type === 'DocTimeStamp') {
    let timestamp: TimestampCheck | undefined;
    let tsaCertificate: Uint8Array | undefined;
    let certificates: Uint8Array[] = [];
    try {
      const info = readTimestampToken({ token: signature.contents });
      tsaCertificate = info.tsaCertificate;
      certificates = info.certificates;
      const coversData =
        info.hashAlgorithm !== undefined &&
        bytesEqual(info.hashedMessage, digest(info.hashAlgorithm, ...content));
      timestamp = {
        genTime: info.genTime.toISOString(),
        valid: info.valid,
        coversData,
        tsa: info.tsaCertificate ? certificateFields(info.tsaCertificate).commonName : undefined,
        problems: info.problems,
      };
      problems.push(...info.problems);
      if (!coversData) problems.push('The document timestamp does not cover the signed byte ranges');
    } catch (error) {
      problems.push(
        `The timestamp token cannot be read (${error instanceof Error ? error.message : 'unknown'})`,
      );
    }
    const chain = tsaCertificate
      ? await validateCertificateChain({
          certificate: tsaCertificate,
          intermediates: [...certificates, ...dss.certificates],
          trustAnchors: context.trustAnchors,
          at: timestamp ? new Date(timestamp.genTime) : context.validationTime,
          crls: dss.crls,
          ocsps: dss.ocsps,
          cache: context.cache,
        })
      : undefined;
    const intact = padded && timestamp !== undefined && timestamp.valid && timestamp.coversData;
    return {
      ...base,
      signer: tsaCertificate ? signerSummary(tsaCertificate) : undefined,
      digestValid: timestamp?.coversData ?? false,
      signatureValid: timestamp?.valid ?? false,
      certificate: certificateSummary(chain, warnings, { cms: [] }),
      timestamp,
      ...indicationOf({ intact, chain }),
      documentTimestamps: [],
      modifications: [],
      verdict: 'valid',
      evidence: {
        contents: signature.contents,
        chain: chain?.chain ?? [],
        revocation: revocationEvidence(chain, { cms: [] }),
        timestampRevocation: [],
      },
    };
  }

  let cms: SignedDataContents | undefined;
  try {
    cms = readSignedData({ der: signature.contents });
  } catch (error) {
    problems.push(`The CMS cannot be read (${error instanceof Error ? error.message : 'unknown'})`);
  }
  if (!cms) {
    return {
      ...base,
      digestValid: false,
      signatureValid: false,
      certificate: certificateSummary(undefined, warnings, { cms: [] }),
      indication: 'TOTAL_FAILED',
      subIndication: 'FORMAT_FAILURE',
      documentTimestamps: [],
      modifications: [],
      verdict: 'valid',
      evidence: { contents: signature.contents, chain: [], revocation: [], timestampRevocation: [] },
    };
  }
  const verification = verifySignedData({ cms, content, extraCertificates: dss.certificates });
  problems.push(...verification.problems);
  if (cms.signingTime)
    warnings.push('The CMS carries a signing-time attribute, which PAdES baseline forbids');

  let timestamp: TimestampCheck | undefined;
  /** The last token, read (for its TSA's chain). */
  let lastToken: TimestampTokenInfo | undefined;
  for (const token of cms.timestampTokens) {
    lastToken = undefined;
    try {
      const info = readTimestampToken({ token });
      lastToken = info;
      const coversData =
        info.hashAlgorithm !== undefined &&
        bytesEqual(info.hashedMessage, digest(info.hashAlgorithm, cms.signatureValue));
      timestamp = {
        genTime: info.genTime.toISOString(),
        valid: info.valid && coversData,
        coversData,
        tsa: info.tsaCertificate ? certificateFields(info.tsaCertificate).commonName : undefined,
        problems: [
          ...info.problems,
          ...(coversData ? [] : ['The timestamp does not cover this signature value']),
        ],
      };
      if (!timestamp.valid) warnings.push(...timestamp.problems);
    } catch (error) {
      warnings.push(
        `A signature timestamp cannot be read (${error instanceof Error ? error.message : 'unknown'})`,
      );
    }
  }

  let timestampRevocation: RevocationEvidence[] = [];
  const timestampToken = cms.timestampTokens[cms.timestampTokens.length - 1];
  if (timestamp?.valid && timestampToken) {
    // The last token as the loop read it; one it could not read throws again here.
    const token = lastToken ?? readTimestampToken({ token: timestampToken });
    if (token.tsaCertificate) {
      const tsaChain = await validateCertificateChain({
        certificate: token.tsaCertificate,
        intermediates: [...token.certificates, ...dss.certificates],
        trustAnchors: context.trustAnchors,
        at: new Date(timestamp.genTime),
        crls: [...cms.crls, ...dss.crls],
        ocsps: dss.ocsps,
        cache: context.cache,
      });
      timestamp.revocation = tsaChain.chain.length > 1 ? tsaChain.revocation : 'unknown';
      timestampRevocation = revocationEvidence(tsaChain, { cms: cms.crls });
      timestamp.revocationData = revocationFound(tsaChain, { cms: cms.crls });
    }
  }

  const signer = verification.signerCertificate;
  const chainOptions = signer && {
    certificate: signer,
    intermediates: [...cms.certificates, ...dss.certificates],
    trustAnchors: context.trustAnchors,
    // With a valid timestamp the certificates must be valid when it was taken (proof of existence).
    at: timestamp?.valid ? new Date(timestamp.genTime) : context.validationTime,
    // The adbe-revocationInfoArchival answers the signer fetched before signing come first (issue 38).
    crls: [...cms.archivedRevocation.crls, ...cms.crls, ...dss.crls],
    ocsps: [...cms.archivedRevocation.ocsps, ...dss.ocsps],
    cache: context.cache,
  };
  let chain = chainOptions ? await validateCertificateChain(chainOptions) : undefined;
  let online: Uint8Array[] = [];
  if (chainOptions && chain?.trusted && chain.revocation === 'unknown' && context.fetchRevocation) {
    // Only a chain to a trusted root is asked about: the addresses are ones a trusted CA signed.
    const fetched = await context.fetchRevocation(chain.chain, context.validationTime);
    online = [...fetched.crls, ...fetched.ocsps];
    if (online.length > 0) {
      chain = await validateCertificateChain({
        ...chainOptions,
        crls: [...chainOptions.crls, ...fetched.crls],
        ocsps: [...chainOptions.ocsps, ...fetched.ocsps],
      });
    }
    const used = chain.revocationAnswers.filter((answer) =>
      online.some((der) => bytesEqual(der, answer.der)),
    );
    if (used.length > 0)
      warnings.push(
        `Revocation status fetched online at ${context.validationTime.toISOString()}, not found in the file: ${chain.revocation}`,
      );
    for (const problem of fetched.problems) warnings.push(`Revocation status not fetched online: ${problem}`);
  }
  const cmsRevocation = [...cms.crls, ...cms.archivedRevocation.crls, ...cms.archivedRevocation.ocsps];
  const intact =
    padded &&
    verification.digestMatches &&
    verification.signatureValid &&
    verification.signingCertificateMatches;
  return {
    ...base,
    signer: signer ? signerSummary(signer) : undefined,
    digestValid: verification.digestMatches,
    signatureValid: verification.signatureValid,
    certificate: certificateSummary(chain, warnings, { cms: cmsRevocation, online }),
    timestamp,
    ...indicationOf({ intact, chain, revocationRequired: true }),
    documentTimestamps: [],
    modifications: [],
    verdict: 'valid',
    evidence: {
      cms,
      contents: signature.contents,
      chain: chain?.chain ?? [],
      revocation: revocationEvidence(chain, { cms: cmsRevocation, online }),
      timestampRevocation,
      ...(timestampToken ? { timestampToken } : {}),
    },
  };
}

/**
 * ETSI EN 319 102-1 indication of one signature. With `revocationRequired` (a signature's signer, not
 * a document timestamp's TSA), a trusted chain whose revocation status the file (or an allowed online
 * fetch) does not establish is INDETERMINATE / TRY_LATER, never TOTAL_PASSED (issue 38).
 */
function indicationOf(options: { intact: boolean; chain?: ChainValidation; revocationRequired?: boolean }): {
  indication: Indication;
  subIndication?: string;
} {
  if (!options.intact) return { indication: 'TOTAL_FAILED', subIndication: 'HASH_FAILURE' };
  const { chain } = options;
  if (!chain) return { indication: 'INDETERMINATE', subIndication: 'NO_SIGNING_CERTIFICATE_FOUND' };
  if (chain.revocation === 'revoked') return { indication: 'TOTAL_FAILED', subIndication: 'REVOKED' };
  if (!chain.trusted) {
    const expired = chain.problems.some((p) => p.includes('is not valid at'));
    return {
      indication: 'INDETERMINATE',
      subIndication: expired ? 'OUT_OF_BOUNDS_NO_POE' : 'NO_CERTIFICATE_CHAIN_FOUND',
    };
  }
  if (options.revocationRequired && chain.revocation !== 'good')
    return { indication: 'INDETERMINATE', subIndication: 'TRY_LATER' };
  return { indication: 'TOTAL_PASSED' };
}

function certificateSummary(
  chain: ChainValidation | undefined,
  warnings: string[],
  sources: RevocationSources,
): SignatureCheck['certificate'] {
  if (!chain)
    return {
      trusted: false,
      chain: [],
      revocation: 'unknown',
      revocationSources: [],
      revocationData: [],
      problems: ['No signer certificate'],
    };
  if (chain.revocation === 'unknown') warnings.push('No revocation data for the certificate chain');
  return {
    trusted: chain.trusted,
    chain: chain.chain.map((der) => certificateFields(der).subjectText),
    revocation: chain.revocation,
    revocationSources: chain.revocationSources,
    revocationData: revocationFound(chain, sources),
    problems: chain.problems,
  };
}

/**
 * The answers a chain was checked with that are not in the DSS: those in the CMS (its `crls`, or the
 * signed adbe-revocationInfoArchival attribute), and those fetched online when verifying.
 */
interface RevocationSources {
  cms: Uint8Array[];
  online?: Uint8Array[];
}

/** Where a CRL or OCSP response the chain was checked with sits. */
function foundIn(der: Uint8Array, sources: RevocationSources): RevocationFound['foundIn'] {
  if (sources.cms.some((crl) => bytesEqual(crl, der))) return 'cms';
  return sources.online?.some((answer) => bytesEqual(answer, der)) ? 'online' : 'dss';
}

function revocationFound(chain: ChainValidation, sources: RevocationSources): RevocationFound[] {
  return chain.revocationAnswers.map((answer) => ({
    certificate: certificateFields(answer.certificate).subjectText,
    status: answer.status,
    source: answer.source,
    foundIn: foundIn(answer.der, sources),
    ...(answer.issuedAt ? { issuedAt: answer.issuedAt.toISOString() } : {}),
  }));
}

function revocationEvidence(
  chain: ChainValidation | undefined,
  sources: RevocationSources,
): RevocationEvidence[] {
  return (chain?.revocationAnswers ?? []).map((answer) => ({
    der: answer.der,
    source: answer.source,
    foundIn: foundIn(answer.der, sources),
    ...(answer.issuedAt ? { issuedAt: answer.issuedAt } : {}),
  }));
}

function signerSummary(der: Uint8Array): NonNullable<SignatureCheck['signer']> {
  const { commonName, subjectText, issuerText, notBefore, notAfter, sha256 } = certificateFields(der);
  return { commonName, subjectText, issuerText, notBefore, notAfter, sha256 };
}

/**
 * PAdES levels (ETSI EN 319 142-1 6): B-B a CAdES-detached signature with signing-certificate-v2;
 * B-T a valid signature timestamp or a later document timestamp; B-LT a DSS (added after the
 * signature) holding its chain and revocation data for it; B-LTA a valid document timestamp over a
 * revision that already had that DSS.
 */
async function detectLevels(context: {
  checks: SignatureCheck[];
  /** The whole file. */
  bytes: Uint8Array;
  /** The DSS of the file as it is (readDss, read once for the whole verification). */
  finalDss: DocumentSecurityStore | undefined;
  trustAnchors: Uint8Array[];
  validationTime: Date;
  eofs: number[];
  cache: ValidationCache;
}): Promise<void> {
  const docTimestamps = context.checks.filter(
    (c) => c.kind === 'document-timestamp' && c.indication !== 'TOTAL_FAILED',
  );
  const dssBefore = new Map<SignatureCheck, DocumentSecurityStore | undefined>();
  for (const ts of docTimestamps) {
    // What the timestamp covers: the file up to the %%EOF of its own revision, which holds a DSS
    // written in the same revision (as other tools write B-LTA) as well as any earlier one.
    const tsEnd = ts.byteRange[2]! + ts.byteRange[3]!;
    const previousEnd = context.eofs.filter((offset) => offset < tsEnd).pop();
    if (previousEnd === undefined) continue;
    try {
      const covered = await readPdf(
        context.bytes.subarray(0, eolAfter(context.bytes, previousEnd)),
        (prefix) => readDss({ opened: prefix }),
      );
      dssBefore.set(ts, covered);
      if (covered) ts.evidence.coveredDss = covered;
    } catch {
      dssBefore.set(ts, undefined);
    }
  }
  for (const check of context.checks) {
    const end = check.byteRange[2]! + check.byteRange[3]!;
    check.documentTimestamps = docTimestamps
      .filter((ts) => ts !== check && ts.byteRange[1]! > end && ts.timestamp)
      .map((ts) => ({ fieldName: ts.fieldName, genTime: ts.timestamp!.genTime }))
      .sort((a, b) => a.genTime.localeCompare(b.genTime));
  }
  const { finalDss } = context;
  for (const check of context.checks) {
    if (
      check.kind !== 'signature' ||
      check.subFilter !== 'ETSI.CAdES.detached' ||
      check.indication === 'TOTAL_FAILED'
    ) {
      continue;
    }
    const cms = check.evidence.cms;
    if (!cms || cms.signingCertificateHashes.length === 0) continue;
    let level: PadesLevel = 'B-B';
    const end = check.byteRange[2]! + check.byteRange[3]!;
    const laterTimestamps = docTimestamps.filter((ts) => ts.byteRange[1]! > end);
    if (check.timestamp?.valid || laterTimestamps.length > 0) level = 'B-T';
    const ltv = (dss: DocumentSecurityStore | undefined): Promise<boolean> =>
      dssCoversChain({
        dss,
        chain: check.evidence.chain,
        trustAnchors: context.trustAnchors,
        at: context.validationTime,
        cache: context.cache,
      });
    // Both chains' revocation is evidence of B-LT: the signer's, and the signature timestamp's TSA's.
    const timestampProved = !check.timestamp?.valid || check.timestamp.revocation === 'good';
    if (level === 'B-T' && timestampProved && (await ltv(finalDss))) {
      level = 'B-LT';
      for (const ts of laterTimestamps) {
        if (await ltv(dssBefore.get(ts))) {
          level = 'B-LTA';
          break;
        }
      }
    } else if (level === 'B-T' && finalDss) {
      check.warnings.push('The DSS lacks revocation data for this signature: the level stays B-T');
    }
    check.level = level;
  }
}

async function dssCoversChain(options: {
  dss: DocumentSecurityStore | undefined;
  chain: Uint8Array[];
  trustAnchors: Uint8Array[];
  at: Date;
  cache: ValidationCache;
}): Promise<boolean> {
  const { dss, chain } = options;
  if (!dss || chain.length === 0) return false;
  const inDss = (der: Uint8Array): boolean => dss.certificates.some((c) => bytesEqual(c, der));
  const anchors = options.trustAnchors;
  const needed = chain.filter((der) => !anchors.some((a) => bytesEqual(a, der)));
  if (!needed.every(inDss)) return false;
  const revocation = await validateCertificateChain({
    certificate: chain[0]!,
    intermediates: dss.certificates,
    trustAnchors: [...anchors, chain[chain.length - 1]!],
    at: options.at,
    crls: dss.crls,
    ocsps: dss.ocsps,
    cache: options.cache,
  });
  return revocation.revocation === 'good';
}

/**
 * The difference analysis of the revisions after the first, when a signature has any after it; a
 * file that cannot be analysed has its later revisions reported as one unexplained change.
 */
function revisionChanges(opened: AppendablePdf, checks: SignatureCheck[]): RevisionChanges[] | undefined {
  if (checks.every((check) => check.coversWholeFile)) return [];
  try {
    return analyseRevisions(opened);
  } catch {
    return undefined;
  }
}

/** Each signature's modifications and verdict (see SignatureCheck.verdict). */
function judge(checks: SignatureCheck[], revisions: RevisionChanges[] | undefined): void {
  for (const check of checks) {
    const coverEnd = check.byteRange.length === 4 ? check.byteRange[2]! + check.byteRange[3]! : 0;
    check.modifications =
      revisions !== undefined
        ? modificationsAfter(revisions, coverEnd)
        : !check.coversWholeFile
          ? [
              {
                revision: 1,
                kind: 'other',
                objects: [],
                pages: [],
                description: 'The revisions after this signature could not be read to tell what they changed',
              },
            ]
          : [];
    const intact =
      check.byteRangeValid &&
      check.digestValid &&
      check.signatureValid &&
      check.indication !== 'TOTAL_FAILED';
    check.verdict = !intact
      ? 'invalid'
      : check.modifications.some((m) => !isAllowedAfterSignature(m))
        ? 'changed'
        : check.indication !== 'TOTAL_PASSED'
          ? 'indeterminate'
          : 'valid';
  }
}

/**
 * Whether the hex string between a signature's byte ranges holds its DER value and then only zeros:
 * the room left for a signature is not covered by it, so a change there must be found here.
 */
function zeroPadded(bytes: Uint8Array, byteRange: number[], used: number): boolean {
  const [, gapStart, gapEnd] = byteRange;
  if (gapStart === undefined || gapEnd === undefined) return false;
  return zeroPaddedHex(bytes, gapStart + 1, gapEnd - 1, used * 2);
}

/** The two ranges a well-formed byte range signs, as views of the file. */
function signedRanges(bytes: Uint8Array, byteRange: ByteRange): Uint8Array[] {
  const [a, b, c, d] = byteRange;
  return [bytes.subarray(a, a + b), bytes.subarray(c, c + d)];
}
