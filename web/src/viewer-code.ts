import type * as PdfViewerModule from './pdf-viewer.js';
import workerUrl from 'pdfjs-dist/legacy/build/pdf.worker.min.mjs?url';

/**
 * The PDF viewer's code (pdf.js and its worker, ≈ 440 KB compressed: most of what the page downloads)
 * and whether this browser likely has it. A new visitor on a slow phone first gets the server's image
 * of the first page, and the viewer's code after it, so the two do not share the connection; a
 * returning one has the code at hand and needs no image.
 *
 * The browser's own cache cannot be asked without a failed request in its console, so the page notes
 * in localStorage the name of the worker file it loaded: a content hash, nothing about the person or
 * the document. A new release has new names, and counts as a first visit.
 */
const SEEN_KEY = 'signery.viewerCode';

/** Whether this browser loaded this release's viewer code before (its HTTP cache then has it). */
export function viewerCodeSeen(): boolean {
  try {
    return localStorage.getItem(SEEN_KEY) === workerUrl;
  } catch {
    return false;
  }
}

let worker: Worker | undefined;

/**
 * pdf.js's worker, started once. Its code is the largest download: it starts beside the viewer's
 * module (which would otherwise ask for it only once it has arrived and run) rather than after it.
 */
export function pdfWorker(): Worker {
  worker ??= new Worker(workerUrl, { type: 'module' });
  return worker;
}

export async function loadViewer(): Promise<typeof PdfViewerModule> {
  pdfWorker();
  const module = await import('./pdf-viewer.js');
  try {
    localStorage.setItem(SEEN_KEY, workerUrl);
  } catch {
    // No storage: every visit counts as a first one.
  }
  return module;
}
