import { createHash } from 'node:crypto';
import { checkEmbeddedTrail, type TrailCheck } from '../core/audit/embedded-trail.js';
import { readPdf } from '../pdf/appendable-pdf.js';
import type { PadesLevel } from '../pdf/sign-pdf.js';
import { documentVerdict, type Headline } from '../pdf/verdict.js';
import { isAllowedAfterSignature } from '../pdf/difference-analysis.js';
import { verifyPdf, type SignatureCheck, type VerifyPdfOptions } from '../pdf/verify-pdf.js';

/**
 * `signery verify`'s verdict on a PDF: the one headline every verifier gives (pdf/verdict.ts,
 * `documentVerdict`): `valid`, `changed`, `invalid`, `unconfirmed` (a signer not confirmed: without
 * `--trust`, no chain is) or `unsigned`.
 */
export type FileVerdict = Headline;

export interface FileReport {
  verdict: FileVerdict;
  /** The signature the verdict names (the first broken, or the first whose content was changed after it). */
  signature?: string;
  /** Why, in one sentence. */
  reason: string;
  file: { size: number; sha256: string };
  signatures: {
    fieldName: string;
    kind: SignatureCheck['kind'];
    signer?: string;
    signingTime?: string;
    timestampTime?: string;
    level?: PadesLevel;
    /** Byte range, digest and signature value all hold. */
    intact: boolean;
    /** The chain ends at a given trust anchor (false, and not checked, without `--trust`). */
    trusted: boolean;
    revocation: SignatureCheck['certificate']['revocation'];
    revisionsAfter: number;
    /** This signature's own verdict. */
    verdict: SignatureCheck['verdict'];
    /** What the revisions after it changed. */
    modifications: SignatureCheck['modifications'];
    problems: string[];
  }[];
  auditTrail: TrailCheck;
  problems: string[];
}

/**
 * Verifies a PDF with nothing but its bytes (and, optionally, the roots to trust): no server, no
 * database, and no network unless `fetchRevocation` is given (`--online`). Every signature and the level it proves, the audit trail it carries and
 * that the trail's revisions are the file's own (core/audit/embedded-trail.ts).
 *
 * ```ts
 * const report = await verifyFile(await readFile('contract.pdf'), { trustAnchors: [rootDer] });
 * process.exitCode = report.verdict === 'valid' ? 0 : 1;
 * ```
 */
export async function verifyFile(
  pdf: Uint8Array,
  options: { trustAnchors: Uint8Array[]; fetchRevocation?: VerifyPdfOptions['fetchRevocation'] },
): Promise<FileReport> {
  const problems: string[] = [];
  const file = { size: pdf.length, sha256: createHash('sha256').update(pdf).digest('hex') };
  let signatures: SignatureCheck[];
  let auditTrail: TrailCheck;
  try {
    ({ signatures, auditTrail } = await readPdf(pdf, async (opened) => {
      const verified = await verifyPdf({
        pdf: opened,
        trustAnchors: options.trustAnchors,
        ...(options.fetchRevocation ? { fetchRevocation: options.fetchRevocation } : {}),
      });
      return {
        signatures: verified.signatures,
        auditTrail: await checkEmbeddedTrail(opened, verified.signatures),
      };
    }));
  } catch (error) {
    return {
      verdict: 'invalid',
      reason: 'The file cannot be read as a PDF',
      file,
      signatures: [],
      auditTrail: { present: false, intact: false, problems: [], events: [], revisions: [] },
      problems: [`The file cannot be read as a PDF (${(error as Error).message})`],
    };
  }
  const reported = signatures.map((check) => ({
    fieldName: check.fieldName,
    kind: check.kind,
    ...(check.signer ? { signer: check.signer.commonName } : {}),
    ...(check.claimedSigningTime ? { signingTime: check.claimedSigningTime } : {}),
    ...(check.timestamp?.valid ? { timestampTime: check.timestamp.genTime } : {}),
    ...(check.level ? { level: check.level } : {}),
    intact: check.verdict !== 'invalid',
    trusted: options.trustAnchors.length > 0 && check.certificate.trusted,
    /**
     * The signer's revocation status as the file establishes it, or as fetched with `--online` when it
     * does not (unknown makes the signature INDETERMINATE).
     */
    revocation: check.certificate.revocation,
    revisionsAfter: check.revisionsAfter,
    verdict: check.verdict,
    modifications: check.modifications,
    problems: check.problems,
  }));
  if (reported.length === 0) problems.push('The file has no signatures');
  for (const s of reported)
    if (!s.intact) problems.push(`${s.fieldName}: ${s.problems.join('; ') || 'not intact'}`);
  if (auditTrail.present && !auditTrail.intact)
    problems.push(...auditTrail.problems.map((p) => `Audit trail: ${p}`));
  for (const check of signatures) {
    for (const m of check.modifications)
      if (!isAllowedAfterSignature(m)) problems.push(`After ${check.fieldName}: ${m.description}`);
  }
  const { headline, signature, reason } = documentVerdict({ signatures }, auditTrail);
  return {
    verdict: headline,
    ...(signature ? { signature } : {}),
    reason,
    file,
    signatures: reported,
    auditTrail,
    problems: [...new Set(problems)],
  };
}
