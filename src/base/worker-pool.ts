import { parentPort, type ResourceLimits, type Transferable, type Worker } from 'node:worker_threads';
import { AppError } from './errors.js';
import { startModuleWorker } from './worker-module.js';

/**
 * What a pool's worker answers: the value its handler resolved with, or the error it threw (its class
 * by name and, for the errors an answer is made of, its status), since a worker sends only data.
 */
export type WorkerAnswer<T> =
  { ok: true; value: T } | { ok: false; name: string; message: string; statusCode?: number };

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
 * its worker, past which the worker is ended (and replaced for the next request). Requests beyond the
 * pool's size wait for a free worker. Idle workers do not keep the process alive.
 *
 * The worker's module answers with `serveWorkerRequests`.
 */
export class WorkerPool<Request, Answer> {
  readonly #options: WorkerPoolOptions;
  readonly #idle: Worker[] = [];
  readonly #busy = new Set<Worker>();
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
    await Promise.all([...this.#idle.splice(0), ...this.#busy].map((worker) => worker.terminate()));
    this.#busy.clear();
  }

  #next(): void {
    if (this.#queue.length === 0) return;
    const { besideUrl, module, workers, timeLimitMs, timedOut, resourceLimits } = this.#options;
    const worker =
      this.#idle.pop() ??
      (this.#busy.size < workers
        ? startModuleWorker(besideUrl, module, resourceLimits ? { resourceLimits } : {})
        : undefined);
    if (!worker) return;
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
}
