import { createHash } from 'node:crypto';
import { checkEmbeddedTrail, type TrailCheck } from '../core/audit/embedded-trail.js';
import { readPdf } from '../pdf/appendable-pdf.js';
import type { PadesLevel } from '../pdf/sign-pdf.js';
import { verifyPdf, type SignatureCheck } from '../pdf/verify-pdf.js';

/**
 * `signery verify`'s verdict on a PDF: `intact` when every signature's bytes, digest and value hold,
 * the newest signature covers every byte of the file, nothing was slipped into a signature's
 * /Contents, and the audit trail it carries (if any) checks out; `changed` when bytes were appended
 * after the last signature; `invalid` otherwise; `untrusted` when trust anchors were given and a
 * chain does not end at one of them; `indeterminate` when a signature is intact but the file does not
 * establish its signer's revocation status (ETSI EN 319 102-1 INDETERMINATE / TRY_LATER, issue 38).
 */
export type FileVerdict = 'intact' | 'changed' | 'invalid' | 'untrusted' | 'indeterminate';

export interface FileReport {
  verdict: FileVerdict;
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
    problems: string[];
  }[];
  auditTrail: TrailCheck;
  problems: string[];
}

/**
 * Verifies a PDF with nothing but its bytes (and, optionally, the roots to trust): no server, no
 * database, no network. Every signature and the level it proves, the audit trail it carries and
 * that the trail's revisions are the file's own (core/audit/embedded-trail.ts).
 *
 * ```ts
 * const report = await verifyFile(await readFile('contract.pdf'), { trustAnchors: [rootDer] });
 * process.exitCode = report.verdict === 'intact' ? 0 : 1;
 * ```
 */
export async function verifyFile(
  pdf: Uint8Array,
  options: { trustAnchors: Uint8Array[] },
): Promise<FileReport> {
  const problems: string[] = [];
  const file = { size: pdf.length, sha256: createHash('sha256').update(pdf).digest('hex') };
  let signatures: SignatureCheck[];
  let auditTrail: TrailCheck;
  try {
    ({ signatures, auditTrail } = await readPdf(pdf, async (opened) => {
      const verified = await verifyPdf({ pdf: opened, trustAnchors: options.trustAnchors });
      return {
        signatures: verified.signatures,
        auditTrail: await checkEmbeddedTrail(opened, verified.signatures),
      };
    }));
  } catch (error) {
    return {
      verdict: 'invalid',
      file,
      signatures: [],
      auditTrail: { present: false, intact: false, problems: [], events: [], revisions: [] },
      problems: [`The file cannot be read as a PDF (${(error as Error).message})`],
    };
  }
  const reported = signatures.map((check) => {
    const intact = check.byteRangeValid && check.digestValid && check.signatureValid;
    const own = [...check.problems];
    if (intact && !zeroPadded(pdf, check)) own.push('Bytes were changed in the unused room of its /Contents');
    return {
      fieldName: check.fieldName,
      kind: check.kind,
      ...(check.signer ? { signer: check.signer.commonName } : {}),
      ...(check.claimedSigningTime ? { signingTime: check.claimedSigningTime } : {}),
      ...(check.timestamp?.valid ? { timestampTime: check.timestamp.genTime } : {}),
      ...(check.level ? { level: check.level } : {}),
      intact: intact && own.length === check.problems.length,
      trusted: options.trustAnchors.length > 0 && check.certificate.trusted,
      /** The signer's revocation status as the file establishes it (issue 38: unknown is INDETERMINATE). */
      revocation: check.certificate.revocation,
      revisionsAfter: check.revisionsAfter,
      problems: own,
    };
  });
  if (reported.length === 0) problems.push('The file has no signatures');
  for (const s of reported)
    if (!s.intact) problems.push(`${s.fieldName}: ${s.problems.join('; ') || 'not intact'}`);
  if (auditTrail.present && !auditTrail.intact)
    problems.push(...auditTrail.problems.map((p) => `Audit trail: ${p}`));
  const last = signatures.at(-1);
  const appended = last !== undefined && !last.coversWholeFile;
  if (appended) problems.push(`Bytes were added after the last signature (${last.fieldName})`);
  const untrusted = options.trustAnchors.length > 0 && reported.some((s) => !s.trusted);
  // ETSI EN 319 102-1: a signature whose signer's revocation status the file does not establish is
  // INDETERMINATE (TRY_LATER), never passed (issue 38); a document timestamp's TSA is not held to it.
  const unproved = reported.filter((s) => s.kind === 'signature' && s.intact && s.revocation !== 'good');
  for (const s of unproved)
    problems.push(
      `${s.fieldName}: ${s.revocation === 'revoked' ? 'the signer’s certificate is revoked' : 'the revocation status of the signer’s certificate is not established by the file (INDETERMINATE, TRY_LATER)'}`,
    );
  const verdict: FileVerdict =
    reported.length === 0 || reported.some((s) => !s.intact) || (auditTrail.present && !auditTrail.intact)
      ? 'invalid'
      : appended
        ? 'changed'
        : untrusted
          ? 'untrusted'
          : unproved.length > 0
            ? 'indeterminate'
            : 'intact';
  return {
    verdict,
    file,
    signatures: reported,
    auditTrail,
    problems,
  };
}

/**
 * Whether the hex string between a signature's byte ranges holds its CMS and then only zeros: the
 * room left for a signature is not covered by it, so a change there must be found here.
 */
function zeroPadded(pdf: Uint8Array, check: SignatureCheck): boolean {
  const [, gapStart, gapEnd] = check.byteRange;
  if (gapStart === undefined || gapEnd === undefined) return false;
  const hex = Buffer.from(pdf.subarray(gapStart + 1, gapEnd - 1)).toString('latin1');
  const used = check.evidence.contents.length * 2;
  return /^[0-9a-fA-F]*$/.test(hex) && /^0*$/.test(hex.slice(used));
}
