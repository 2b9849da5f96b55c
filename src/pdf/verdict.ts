import { isAllowedAfterSignature } from './difference-analysis.js';
import type { PdfVerification, SignatureCheck } from './verify-pdf.js';

/**
 * The one headline on a signed file (DESIGN "Decided this round", Verification), the same for
 * `GET /documents/:id/verify`, `POST /verify`, the public page and `signery verify`:
 * - `unsigned`: no signature or document timestamp;
 * - `invalid`: a signature's bytes, digest, value, byte range or /Contents padding fail (or its
 *   indication is TOTAL_FAILED), or the audit trail the file carries does not check out;
 * - `changed`: a revision after a signature went beyond what the rules allow after one
 *   (validation data; later signatures with their fields and appearances; form filling;
 *   annotations that cover no signed content);
 * - `unconfirmed`: every signature intact, nothing changed, but a signer is not confirmed (not
 *   trusted, revocation not established: an INDETERMINATE indication);
 * - `valid`: every signature intact and confirmed, nothing changed.
 */
export type Headline = 'valid' | 'changed' | 'invalid' | 'unconfirmed' | 'unsigned';

export interface DocumentVerdict {
  headline: Headline;
  /** fieldName of the first broken signature (invalid) or the first whose covered content a later revision altered (changed). */
  signature?: string;
  reason: string;
}

/**
 * The headline of a verification, with the signature it concerns and a sentence saying why.
 *
 * ```ts
 * const { headline, reason } = documentVerdict(await verifyPdf({ pdf, trustAnchors }), trail);
 * ```
 */
export function documentVerdict(
  verification: Pick<PdfVerification, 'signatures'>,
  auditTrail?: { present: boolean; intact: boolean; problems: string[] },
): DocumentVerdict {
  const { signatures } = verification;
  if (signatures.length === 0) return { headline: 'unsigned', reason: 'The file has no signatures' };
  const broken = signatures.find((check) => check.verdict === 'invalid');
  if (broken) {
    return {
      headline: 'invalid',
      signature: broken.fieldName,
      reason: `${label(broken)} is broken: ${broken.problems[0] ?? brokenReason(broken)}`,
    };
  }
  if (auditTrail?.present && !auditTrail.intact) {
    return {
      headline: 'invalid',
      reason: `The embedded audit trail does not check out: ${auditTrail.problems[0] ?? 'it does not match the file'}`,
    };
  }
  const changed = signatures.find((check) => check.verdict === 'changed');
  if (changed) {
    const first = changed.modifications.find((m) => !isAllowedAfterSignature(m))!;
    return {
      headline: 'changed',
      signature: changed.fieldName,
      reason: `${label(changed)}: after it, ${lowerFirst(first.description)} (revision ${first.revision} after it)`,
    };
  }
  const unconfirmed = signatures.find((check) => check.verdict === 'indeterminate');
  if (unconfirmed) {
    return {
      headline: 'unconfirmed',
      signature: unconfirmed.fieldName,
      reason: `Nothing changed after any signature, but the signer of ${label(unconfirmed).replace(/^\w/, (c) => c.toLowerCase())} is not confirmed (${unconfirmed.subIndication ?? unconfirmed.indication})`,
    };
  }
  return {
    headline: 'valid',
    reason:
      'Every signature is intact and confirmed, and nothing after any of them went beyond what is allowed after a signature',
  };
}

function label(check: SignatureCheck): string {
  return `${check.kind === 'document-timestamp' ? 'Document timestamp' : 'Signature'} ${check.fieldName}`;
}

function brokenReason(check: SignatureCheck): string {
  if (!check.byteRangeValid) return 'its byte range is malformed';
  if (!check.digestValid) return 'the signed bytes were changed';
  if (!check.signatureValid) return 'its signature value does not verify';
  return check.subIndication ?? 'it failed';
}

function lowerFirst(text: string): string {
  return /^(A|An|The)\b/.test(text) ? text[0]!.toLowerCase() + text.slice(1) : text;
}
