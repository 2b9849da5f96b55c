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
  problems: string[];
  warnings: string[];
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

/** What was appended after a signature: nothing, only later signatures, long-term validation data, or other changes. */
export type After =
  | { kind: 'none' }
  | { kind: 'signatures' }
  | { kind: 'ltv'; level: Level }
  | { kind: 'changed'; count: number };

const end = (s: ReportSignature) => (s.byteRange[2] ?? 0) + (s.byteRange[3] ?? 0);

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
 * What came after a signature: every later signature or timestamp is one incremental update; more
 * updates than those are changes no later signature needed. One update after the last signature of a
 * B-LT or B-LTA file is the validation data that level adds (the DSS), and is said to be so.
 */
export function afterOf(signature: ReportSignature, all: ReportSignature[]): After {
  if (signature.coversWholeFile || signature.revisionsAfter === 0) return { kind: 'none' };
  const later = all.filter((other) => end(other) > end(signature)).length;
  const extra = signature.revisionsAfter - later;
  if (extra <= 0) return { kind: 'signatures' };
  const ltv = ltvLevel(signature, all);
  if (extra === 1 && ltv && later === 0) return { kind: 'ltv', level: ltv };
  return { kind: 'changed', count: extra };
}

function ltvLevel(last: ReportSignature, all: ReportSignature[]): Level | undefined {
  const levels = [last, ...all].map((s) => s.level);
  return levels.find((level) => level === 'B-LTA') ?? levels.find((level) => level === 'B-LT');
}

/** The verdict on the whole file. */
export function overallOf(report: Report): Overall {
  const { signatures } = report;
  if (signatures.length === 0) return 'unsigned';
  const states = signatures.map(stateOf);
  if (states.includes('broken')) return 'invalid';
  const latest = signatures.reduce((a, b) => (end(b) > end(a) ? b : a));
  if (afterOf(latest, signatures).kind === 'changed') return 'changed';
  if (states.includes('unconfirmed')) return 'unconfirmed';
  return 'valid';
}
