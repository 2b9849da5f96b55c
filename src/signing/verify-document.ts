import type { Actor } from '../auth/actor.js';
import type { Deps } from '../deps.js';
import { loadVisible } from '../documents/access.js';
import { verifyPdf, type PdfVerification } from '../pdf/verify-pdf.js';
import { mainFileBytes } from './sign-document.js';

/**
 * GET /documents/:id/verify and POST /verify: for each signature its signer, claimed time, byte range and
 * coverage, digest and CMS checks, chain and trust (against the organisation's roots), PAdES level and
 * timestamps; with `dss`, the ETSI TS 119 102-2 reports as XML strings (spec Versioning 4).
 */
export async function verifyDocument(
  deps: Deps,
  actor: Actor,
  options: { id: string; dss: boolean },
): Promise<PdfVerification> {
  const doc = await loadVisible(deps.db, actor, options.id);
  const { bytes, file } = await mainFileBytes(deps, doc);
  const { trustAnchors } = await deps.seal();
  return verifyPdf({ pdf: bytes, trustAnchors, dss: options.dss, documentName: file.name });
}

export async function verifyUpload(
  deps: Deps,
  options: { pdf: Uint8Array; name: string; dss: boolean },
): Promise<PdfVerification> {
  const { trustAnchors } = await deps.seal();
  return verifyPdf({ pdf: options.pdf, trustAnchors, dss: options.dss, documentName: options.name });
}
