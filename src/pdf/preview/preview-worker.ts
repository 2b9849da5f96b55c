import { serveWorkerRequests } from '../../base/worker-pool.js';
import { drawFirstPage, type PagePreview } from './draw-first-page.js';

// A worker of PagePreviews: one page drawn at a time, the image handed back without a copy.
serveWorkerRequests(drawFirstPage, (preview: PagePreview) => [preview.image.buffer]);
