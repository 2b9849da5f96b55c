import { availableParallelism } from 'node:os';
import { WorkerPool } from '../base/worker-pool.js';
import type { AppError } from '../base/errors.js';
import { LimitExceeded, ValidationError } from '../base/errors.js';
import type { AnchorPosition, AnchorRequest } from './anchors.js';
import { PdfEncrypted, PdfInvalid, PdfTooLarge } from './errors.js';

/** What one search may take, in wall time of its own worker, before the worker is ended. */
export const ANCHOR_SEARCH_MS = 10_000;

export interface SearchRequest {
  pdf: Uint8Array;
  anchors: AnchorRequest[];
}

// The typed errors findAnchors throws, rebuilt on this side by name (a worker sends only data), or
// else by the status they answer with.
const ERRORS: Record<string, new (message: string) => AppError> = {
  ValidationError,
  LimitExceeded,
  PdfInvalid,
  PdfTooLarge,
  PdfEncrypted,
};
const BY_STATUS: Record<number, new (message: string) => AppError> = {
  400: ValidationError,
  413: LimitExceeded,
};

function rebuilt(answer: { name: string; message: string; statusCode?: number }): Error {
  const type = ERRORS[answer.name] ?? (answer.statusCode ? BY_STATUS[answer.statusCode] : undefined);
  return type ? new type(answer.message) : new Error(answer.message);
}

/**
 * Searches PDFs for anchors (pdf/anchors.ts) in worker threads, so that no document, however its text
 * is laid out, holds the event loop: the PDF engine's text extraction is synchronous and grows faster
 * than the page's content (a 3.7 KB PDF whose one page shows 29,000 glyphs on one line took 27 s).
 * Each search runs in a worker of its own for at most `timeLimitMs`; past it the worker is ended and
 * the search answers 413 LIMIT_EXCEEDED. Searches beyond the pool's size wait for a free worker.
 *
 * ```ts
 * const search = new AnchorSearch();
 * const [{ fields }] = await search.find({ pdf, anchors: [{ id: 'sig1', text: 'Sign here' }] });
 * await search.close();
 * ```
 */
export class AnchorSearch {
  readonly #pool: WorkerPool<SearchRequest, AnchorPosition[]>;

  constructor(options: { workers?: number; timeLimitMs?: number } = {}) {
    const timeLimitMs = options.timeLimitMs ?? ANCHOR_SEARCH_MS;
    this.#pool = new WorkerPool({
      besideUrl: import.meta.url,
      module: 'anchor-worker',
      // One core is left to the server's own thread.
      workers: options.workers ?? Math.max(1, availableParallelism() - 1),
      timeLimitMs,
      timedOut: () =>
        new LimitExceeded(
          `signatureAnchors: searching the PDF for anchors took longer than ${timeLimitMs / 1000} s`,
        ),
    });
  }

  async find(request: SearchRequest): Promise<AnchorPosition[]> {
    const answer = await this.#pool.run(request);
    if (answer.ok) return answer.value;
    throw rebuilt(answer);
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}
