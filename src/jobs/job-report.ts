import { performance } from 'node:perf_hooks';
import type { ClaimedJob, SettleOutcome } from './queue.js';

/** pino's shape (Fastify's logger fits), so the queue does not depend on Fastify. */
export interface JobLogger {
  info(details: Record<string, unknown>, message: string): void;
  warn(details: Record<string, unknown>, message: string): void;
  error(details: Record<string, unknown>, message: string): void;
  /** A logger whose every line also carries `bindings` (pino's child loggers). */
  child(bindings: Record<string, unknown>): JobLogger;
}

/** Hears how each run of a job ended (the metrics of app.ts). */
export interface JobMetrics {
  jobEnded(type: string, outcome: SettleOutcome['outcome'], seconds: number): void;
}

export const SILENT: JobLogger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => SILENT,
};

/**
 * What a worker tells about one run of one job: a line when it starts and one when its outcome is
 * written (done; failed and retried later; failed for good, `dead`; or its claim lost), each carrying
 * the job's id, type, attempt and the id of the request that enqueued it as `reqId` — the name
 * Fastify gives the request id in its own lines, so `grep <id>` finds the request and the jobs it
 * caused — and the run in the metrics.
 *
 * ```ts
 * const report = new JobReport(log, metrics, job);
 * …run the handler, write its settlement…
 * report.ended(outcome, settlement.error);
 * ```
 */
export class JobReport {
  readonly log: JobLogger;
  readonly #job: ClaimedJob;
  readonly #metrics: JobMetrics | undefined;
  readonly #started = performance.now();
  #ended = false;

  constructor(log: JobLogger, metrics: JobMetrics | undefined, job: ClaimedJob) {
    this.#job = job;
    this.#metrics = metrics;
    this.log = log.child({
      jobId: job.id,
      type: job.type,
      attempt: job.attempts,
      ...(job.requestId === null ? {} : { reqId: job.requestId }),
    });
    this.log.info({}, 'job started');
  }

  /** The run's outcome, once written; `error` is why it failed (null when it did not). Said once. */
  ended(outcome: SettleOutcome, error: string | null): void {
    if (this.#ended) return;
    this.#ended = true;
    const seconds = (performance.now() - this.#started) / 1000;
    this.#metrics?.jobEnded(this.#job.type, outcome.outcome, seconds);
    const durationMs = Math.round(seconds * 1000);
    switch (outcome.outcome) {
      case 'done':
        this.log.info({ durationMs }, 'job done');
        return;
      case 'retry':
        this.log.warn(
          { durationMs, error, retryAt: outcome.runAt.toISOString() },
          'job failed; retried later',
        );
        return;
      case 'dead':
        this.log.error({ durationMs, error }, 'job failed for good (dead)');
        return;
      case 'lost':
        this.log.warn(
          { durationMs, error },
          'job outcome not written (its claim was lost or the write failed); it runs again',
        );
    }
  }
}

/** What a failed job records of an error: its message. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
