/**
 * What a verification report (src/signing/verification-report.ts, the answer of POST /verify) means in
 * plain words: the verdict on the whole file, and for each signature what it proves and what broke.
 * No decision is made here that the report did not make: the page only reads it.
 */

export type Level = 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';

export interface ReportTimestamp {
  genTime: string;
  valid: boolean;
  coversData: boolean;
  tsa?: string;
  problems: string[];
}

export interface ReportSignature {
  fieldName: string;
  kind: 'signature' | 'document-timestamp';
  signerName?: string;
  signer?: { commonName: string; subjectText: string; issuerText: string };
  claimedSigningTime?: string;
  byteRange: number[];
  byteRangeValid: boolean;
  coversWholeFile: boolean;
  revisionsAfter: number;
  digestValid: boolean;
  signatureValid: boolean;
  certificate: { trusted: boolean; revocation: 'good' | 'revoked' | 'unknown'; problems: string[] };
  timestamp?: ReportTimestamp;
  level?: Level;
  indication: 'TOTAL_PASSED' | 'TOTAL_FAILED' | 'INDETERMINATE';
  subIndication?: string;
  /** What every later revision changed (the server's difference analysis). */
  modifications?: Modification[];
  /** This signature's own verdict, as the server decided it. */
  verdict?: 'valid' | 'changed' | 'invalid' | 'indeterminate';
  problems: string[];
  warnings: string[];
}

export type ModificationKind = 'validation-data' | 'signature' | 'form-filling' | 'annotation' | 'other';

export interface Modification {
  revision: number;
  kind: ModificationKind;
  objects: number[];
  pages: number[];
  coversSignedContent?: boolean;
  rect?: number[];
  description: string;
}

/** The embedded audit trail, when the installation reports it (absent from older reports). */
export interface AuditTrail {
  present: boolean;
  intact: boolean;
  coveredBy?: string;
  problems: string[];
  document?: { id: string; title: string };
  events: { occurredAt: string; activityType: string; actor: string; hash: string }[];
  revisions: { revision: number; reason: string; sha256: string; inFile: boolean }[];
}

export interface Report {
  /** The one headline, decided by the server for every verifier (src/pdf/verdict.ts). */
  verdict: { headline: Overall; signature?: string; reason: string };
  signatures: ReportSignature[];
  validationTime: string;
  auditTrail?: AuditTrail;
  dss?: { validationReport: string };
}

export type Overall = 'valid' | 'changed' | 'invalid' | 'unconfirmed' | 'unsigned';
export type SignatureState = 'ok' | 'broken' | 'unconfirmed';

/** What broke, as keys of the page's texts (`broke.*`). */
export type Finding =
  | 'format'
  | 'range'
  | 'digest'
  | 'signature'
  | 'revoked'
  | 'untrusted'
  | 'expired'
  | 'noCertificate'
  | 'timestamp';

export function stateOf(signature: ReportSignature): SignatureState {
  if (signature.indication === 'TOTAL_PASSED') return 'ok';
  if (signature.indication === 'TOTAL_FAILED') return 'broken';
  // INDETERMINATE with the bytes intact: who signed is not confirmed; with them broken, it is broken.
  return signature.digestValid && signature.signatureValid && signature.byteRangeValid
    ? 'unconfirmed'
    : 'broken';
}

/** What broke in a signature, in the order a reader needs it. */
export function findingsOf(signature: ReportSignature): Finding[] {
  const found: Finding[] = [];
  if (signature.subIndication === 'FORMAT_FAILURE') found.push('format');
  if (!signature.byteRangeValid) found.push('range');
  if (!signature.digestValid && signature.subIndication !== 'FORMAT_FAILURE') found.push('digest');
  else if (!signature.signatureValid && signature.subIndication !== 'FORMAT_FAILURE') found.push('signature');
  if (signature.certificate.revocation === 'revoked' || signature.subIndication === 'REVOKED')
    found.push('revoked');
  if (signature.subIndication === 'NO_SIGNING_CERTIFICATE_FOUND') found.push('noCertificate');
  else if (signature.subIndication === 'OUT_OF_BOUNDS_NO_POE') found.push('expired');
  else if (!signature.certificate.trusted && signature.kind === 'signature') found.push('untrusted');
  const stamp = signature.timestamp;
  if (stamp && (!stamp.valid || !stamp.coversData) && signature.kind === 'document-timestamp')
    found.push('timestamp');
  if (stamp && !stamp.valid && signature.kind === 'signature') found.push('timestamp');
  return [...new Set(found)];
}

/**
 * What came after a signature, as the server's difference analysis found it: each change with its
 * kind, in the order of the revisions.
 */
export function changesOf(signature: ReportSignature): Modification[] {
  return signature.modifications ?? [];
}

/** Whether a change is one the rules allow after a signature (the server judged it so too). */
export function allowedChange(change: Modification): boolean {
  if (change.kind === 'other') return false;
  return change.kind !== 'annotation' || change.coversSignedContent !== true;
}

/** The verdict on the whole file: the server's, never decided here. */
export function overallOf(report: Report): Overall {
  return report.verdict.headline;
}
