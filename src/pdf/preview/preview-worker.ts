import { serveWorkerRequests } from '../../base/worker-pool.js';
import { drawFirstPage, loadDrawingEngine, type PagePreview } from './draw-first-page.js';

// Loaded before the worker says it is ready (serveWorkerRequests): a page's time is its drawing alone.
await loadDrawingEngine();

// A worker of PagePreviews: one page drawn at a time, the image handed back without a copy.
serveWorkerRequests(drawFirstPage, (preview: PagePreview) => [preview.image.buffer]);
