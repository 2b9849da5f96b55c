import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../core/worker-module.js';
import type { AppError } from '../core/errors.js';
import { LimitExceeded, ValidationError } from '../core/errors.js';
import type { AnchorPosition, AnchorRequest } from './anchors.js';
import { PdfEncrypted, PdfInvalid, PdfTooLarge } from './errors.js';

/** What one search may take, in wall time of its own worker, before the worker is ended. */
export const ANCHOR_SEARCH_MS = 10_000;

/**
 * What a worker answers: the anchors found, or the error findAnchors threw (its class by name, and
 * for the errors an answer is made of, its status).
 */
export type SearchAnswer =
  | { ok: true; positions: AnchorPosition[] }
  | { ok: false; name: string; message: string; statusCode?: number };

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

interface Job {
  request: SearchRequest;
  resolve(positions: AnchorPosition[]): void;
  reject(error: unknown): void;
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
  readonly #size: number;
  readonly #timeLimitMs: number;
  readonly #idle: Worker[] = [];
  readonly #busy = new Set<Worker>();
  readonly #queue: Job[] = [];
  #closed = false;

  constructor(options: { workers?: number; timeLimitMs?: number } = {}) {
    // One core is left to the server's own thread.
    this.#size = options.workers ?? Math.max(1, availableParallelism() - 1);
    this.#timeLimitMs = options.timeLimitMs ?? ANCHOR_SEARCH_MS;
  }

  find(request: SearchRequest): Promise<AnchorPosition[]> {
    if (this.#closed) return Promise.reject(new Error('the anchor search is closed'));
    return new Promise((resolve, reject) => {
      this.#queue.push({ request, resolve, reject });
      this.#next();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) job.reject(new Error('the anchor search is closed'));
    await Promise.all([...this.#idle.splice(0), ...this.#busy].map((worker) => worker.terminate()));
    this.#busy.clear();
  }

  #next(): void {
    if (this.#queue.length === 0) return;
    const worker = this.#idle.pop() ?? (this.#busy.size < this.#size ? newWorker() : undefined);
    if (!worker) return;
    const job = this.#queue.shift()!;
    this.#busy.add(worker);
    worker.ref();
    const settle = (answer: SearchAnswer | Error, keep: boolean) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      this.#busy.delete(worker);
      if (keep && !this.#closed) {
        worker.unref();
        this.#idle.push(worker);
      } else void worker.terminate();
      if (answer instanceof Error) job.reject(answer);
      else if (answer.ok) job.resolve(answer.positions);
      else job.reject(rebuilt(answer));
      this.#next();
    };
    const onMessage = (answer: SearchAnswer) => settle(answer, true);
    const onError = (error: Error) => settle(error, false);
    const onExit = () => settle(new Error('the anchor search worker stopped'), false);
    const timer = setTimeout(
      () =>
        settle(
          new LimitExceeded(
            `signatureAnchors: searching the PDF for anchors took longer than ${this.#timeLimitMs / 1000} s`,
          ),
          false,
        ),
      this.#timeLimitMs,
    );
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    worker.postMessage(job.request);
  }
}

function newWorker(): Worker {
  return startModuleWorker(import.meta.url, 'anchor-worker');
}
