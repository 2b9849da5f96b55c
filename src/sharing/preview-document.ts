import { liveDocumentFiles } from '../core/access/document-access.js';
import type { Deps } from '../core/deps.js';
import { NotFound } from '../base/errors.js';
import type { PreviewAheadPayload } from '../core/sharing/preview-ahead.js';
import { loadCallerShare } from '../core/sharing/recipient.js';
import { type RecipientCaller } from '../core/access/recipient-caller.js';
import { NoPreview, type PagePreview } from '../pdf/preview/page-previews.js';

/**
 * GET /share/document/preview: the first page of the recipient's document as an image, for the signer
 * page to show while its PDF viewer is still loading on a slow connection (issue 25: "the first page
 * visible within 2 s on a slow phone profile"). Who may have it is who may read GET /share/document,
 * checked on every call; the image is of the document's main file as it is now, and its tag is that
 * file's content hash, so a browser revalidating its copy gets the new page after each signature.
 */
export async function previewSharedDocument(
  deps: Deps,
  caller: RecipientCaller,
  documentId?: string,
): Promise<PagePreview & { tag: string }> {
  // A link knows its own document; a user names it (loadCallerShare checks either).
  const share = await loadCallerShare(deps, caller, documentId);
  const doc = await liveDocumentFiles(deps.db, share.document_id);
  if (!doc) throw new NotFound('No such document');
  const file = doc.main_file_id ? await deps.files.find(share.tenant_id, doc.main_file_id) : undefined;
  if (!file) throw new NotFound('This document has no PDF to preview');
  try {
    const preview = await deps.previews.firstPage(file.sha256, Number(file.size), () =>
      deps.files.read(file),
    );
    return { ...preview, tag: file.sha256 };
  } catch (error) {
    if (error instanceof NoPreview) throw new NotFound(`No preview of this document: ${error.message}`);
    throw error;
  }
}

/** The job of core/sharing/preview-ahead.ts: the file's first page drawn, so that it is ready. */
export async function drawPreviewAhead(deps: Deps, payload: PreviewAheadPayload): Promise<void> {
  const file = await deps.files.find(payload.tenantId, payload.fileId);
  if (!file) return;
  await deps.previews
    .firstPage(file.sha256, Number(file.size), () => deps.files.read(file))
    .catch((error: unknown) => {
      // A page the server does not draw is remembered as such: nothing to try again.
      if (!(error instanceof NoPreview)) throw error;
    });
}
