import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { loadVisible } from '../core/access/document-access.js';
import { checkEmbeddedTrail } from '../core/audit/embedded-trail.js';
import { readPdf } from '../pdf/appendable-pdf.js';
import { verifyPdf } from '../pdf/verify-pdf.js';
import { mainFileBytes } from '../core/changes/new-main-file.js';
import { verificationReport, type VerificationReport } from './verification-report.js';

/**
 * GET /documents/:id/verify and POST /verify: for each signature its signer, claimed time, byte range and
 * coverage, digest and CMS checks, chain and trust (against the organisation's roots), PAdES level and
 * timestamps; with `evidence`, the CMS, certificates and revocation data as base64; with `dss`, the
 * ETSI TS 119 102-2 reports as XML strings (spec Versioning 4); for a PDF carrying Signery's audit
 * trail, what that trail proves (`auditTrail`).
 */
export async function verifyDocument(
  deps: Deps,
  actor: Actor,
  options: { id: string; dss: boolean; evidence: boolean },
): Promise<VerificationReport> {
  const doc = await loadVisible(deps.db, actor, options.id);
  const { bytes, file } = await mainFileBytes(deps, doc);
  return verifyBytes(deps, { ...options, pdf: bytes, name: file.name });
}

export function verifyUpload(
  deps: Deps,
  options: { pdf: Uint8Array; name: string; dss: boolean; evidence: boolean },
): Promise<VerificationReport> {
  return verifyBytes(deps, options);
}

/**
 * The report on a PDF's bytes: its signatures and its audit trail, from one reading of the file (the
 * objects both need, read lazily; readPdf).
 */
async function verifyBytes(
  deps: Deps,
  options: { pdf: Uint8Array; name: string; dss: boolean; evidence: boolean },
): Promise<VerificationReport> {
  const { trustAnchors } = await deps.seal();
  return readPdf(options.pdf, async (opened) => {
    const verification = await verifyPdf({
      pdf: opened,
      trustAnchors,
      dss: options.dss,
      documentName: options.name,
      ...(deps.config.revocation.fetchWhenVerifying
        ? { fetchRevocation: (chain, now) => deps.revocation.currentStatus(chain, now) }
        : {}),
    });
    return verificationReport(
      verification,
      options,
      await checkEmbeddedTrail(opened, verification.signatures),
    );
  });
}
