import { parentPort, type ResourceLimits, type Transferable, type Worker } from 'node:worker_threads';
import { AppError } from './errors.js';
import { startModuleWorker } from './worker-module.js';

/**
 * What a pool's worker answers: the value its handler resolved with, or the error it threw (its class
 * by name and, for the errors an answer is made of, its status), since a worker sends only data.
 */
export type WorkerAnswer<T> =
  { ok: true; value: T } | { ok: false; name: string; message: string; statusCode?: number };

/** A worker's first message: its module is loaded and it takes requests. */
const READY = 'ready';

/**
 * How long a new worker may take to load its module. Not a request's time: on a busy machine loading
 * pdf.js and the canvas alone has taken over 20 s, and a request given to a worker still loading
 * would be charged for it (and a PDF that draws in a second remembered as one that cannot be drawn).
 */
const START_LIMIT_MS = 120_000;

interface Job<Request, Answer> {
  request: Request;
  transfer: readonly Transferable[];
  resolve(answer: WorkerAnswer<Answer>): void;
  reject(error: unknown): void;
}

export interface WorkerPoolOptions {
  /** The worker's module, beside the caller's (`import.meta.url` and its name: worker-module.ts). */
  besideUrl: string;
  module: string;
  workers: number;
  /** What one request may take, in wall time of its own worker, before the worker is ended. */
  timeLimitMs: number;
  /** The error a request that ran out of time rejects with. */
  timedOut: () => Error;
  resourceLimits?: ResourceLimits;
}

/**
 * Runs requests in worker threads, one at a time per worker, so that work on untrusted input (a PDF's
 * text, its pages drawn) never holds the event loop; each request runs for at most `timeLimitMs` of
 * its worker, past which the worker is ended (and replaced for the next request). A new worker is
 * given requests only once its module has loaded (its first message), so its start-up is never
 * counted in a request's time. Requests beyond the pool's size wait for a free worker. Idle workers do
 * not keep the process alive.
 *
 * The worker's module answers with `serveWorkerRequests`.
 */
export class WorkerPool<Request, Answer> {
  readonly #options: WorkerPoolOptions;
  readonly #idle: Worker[] = [];
  readonly #busy = new Set<Worker>();
  /** Workers loading their module, not yet given a request. */
  readonly #starting = new Set<Worker>();
  readonly #queue: Job<Request, Answer>[] = [];
  #closed = false;

  constructor(options: WorkerPoolOptions) {
    this.#options = options;
  }

  /** The worker's answer to `request`; rejects when the worker ran out of time or stopped. */
  run(request: Request, transfer: readonly Transferable[] = []): Promise<WorkerAnswer<Answer>> {
    if (this.#closed) return Promise.reject(new Error(`the ${this.#options.module} pool is closed`));
    return new Promise((resolve, reject) => {
      this.#queue.push({ request, transfer, resolve, reject });
      this.#next();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0))
      job.reject(new Error(`the ${this.#options.module} pool is closed`));
    await Promise.all(
      [...this.#idle.splice(0), ...this.#busy, ...this.#starting].map((worker) => worker.terminate()),
    );
    this.#busy.clear();
    this.#starting.clear();
  }

  #next(): void {
    if (this.#queue.length === 0) return;
    const { module, timeLimitMs, timedOut } = this.#options;
    const worker = this.#idle.pop();
    if (!worker) {
      this.#start();
      return;
    }
    const job = this.#queue.shift()!;
    this.#busy.add(worker);
    worker.ref();
    const settle = (answer: WorkerAnswer<Answer> | Error, keep: boolean) => {
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
      else job.resolve(answer);
      this.#next();
    };
    const onMessage = (answer: WorkerAnswer<Answer>) => settle(answer, true);
    const onError = (error: Error) => settle(error, false);
    const onExit = () => settle(new Error(`the ${module} worker stopped`), false);
    const timer = setTimeout(() => settle(timedOut(), false), timeLimitMs);
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    worker.postMessage(job.request, job.transfer);
  }

  /** A new worker, if the pool has room for one: idle once it says it is ready, then given the next request. */
  #start(): void {
    const { besideUrl, module, workers, resourceLimits } = this.#options;
    if (this.#busy.size + this.#starting.size >= workers) return;
    const worker = startModuleWorker(besideUrl, module, resourceLimits ? { resourceLimits } : {});
    this.#starting.add(worker);
    const settle = (failure?: Error) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      this.#starting.delete(worker);
      if (this.#closed) return void worker.terminate();
      if (failure) {
        void worker.terminate();
        // The request waiting longest fails, not every one: the next worker may start.
        this.#queue.shift()?.reject(failure);
      } else {
        worker.unref();
        this.#idle.push(worker);
      }
      this.#next();
    };
    const onMessage = (message: unknown) =>
      settle(message === READY ? undefined : new Error(`the ${module} worker spoke before it was ready`));
    const onError = (error: Error) => settle(error);
    const onExit = () => settle(new Error(`the ${module} worker stopped while starting`));
    const timer = setTimeout(
      () => settle(new Error(`the ${module} worker did not start within ${START_LIMIT_MS / 1000} s`)),
      START_LIMIT_MS,
    );
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  }
}

/**
 * The worker's side of a WorkerPool: each request handled in turn, its value or its error sent back.
 * `transfer` names the buffers of a value handed over rather than copied.
 */
export function serveWorkerRequests<Request, Answer>(
  handle: (request: Request) => Promise<Answer>,
  transfer: (answer: Answer) => Transferable[] = () => [],
): void {
  parentPort?.on('message', (request: Request) => {
    handle(request).then(
      (value) => parentPort?.postMessage({ ok: true, value } satisfies WorkerAnswer<Answer>, transfer(value)),
      (error: unknown) =>
        parentPort?.postMessage({
          ok: false,
          name: error instanceof Error ? error.name : 'Error',
          message: error instanceof Error ? error.message : String(error),
          ...(error instanceof AppError ? { statusCode: error.statusCode } : {}),
        } satisfies WorkerAnswer<Answer>),
    );
  });
  // The module and its imports are loaded: from now on a request's time is its own.
  parentPort?.postMessage(READY);
}
