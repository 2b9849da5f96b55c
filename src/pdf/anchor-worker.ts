import { parentPort } from 'node:worker_threads';
import type { SearchAnswer, SearchRequest } from './anchor-search.js';
import { AppError } from '../core/errors.js';
import { findAnchors } from './anchors.js';

// A worker of AnchorSearch: one search at a time, its answer or its error (by class name) sent back.
parentPort?.on('message', (request: SearchRequest) => {
  findAnchors(request).then(
    (positions) => parentPort?.postMessage({ ok: true, positions } satisfies SearchAnswer),
    (error: unknown) =>
      parentPort?.postMessage({
        ok: false,
        name: error instanceof Error ? error.name : 'Error',
        message: error instanceof Error ? error.message : String(error),
        ...(error instanceof AppError ? { statusCode: error.statusCode } : {}),
      } satisfies SearchAnswer),
  );
});
