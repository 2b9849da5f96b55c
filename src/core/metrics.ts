import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { withDeadline } from '../base/deadline.js';
import type { JobMetrics } from '../jobs/job-report.js';
import type { SettleOutcome } from '../jobs/queue.js';
import { JOB_STATES, type QueueTypeStats } from '../jobs/queue-stats.js';
import type { PadesLevel } from '../pdf/sign-pdf.js';
import type { RevocationObserver } from '../pki/revocation-transport.js';
import type { TsaFailure, TsaObserver } from '../pki/tsa-client.js';

/** How one webhook delivery attempt went: delivered, failed (retried later), or failed for good. */
export type WebhookAttemptOutcome = 'success' | 'failure' | 'dead';

/** What a signature duration is of: an organisation seal, or a signature in a user's name (sign calls). */
export type SignatureOperation = 'seal' | 'sign' | 'archive';

export interface MetricsOptions {
  /** The job queue now, in one query (readQueueStats); read at most once per QUEUE_CACHE_MS. */
  queue?: (() => Promise<QueueTypeStats[]>) | undefined;
}

/** A scrape storm reads the queue once per this; a scrape a second old is still worth showing. */
const QUEUE_CACHE_MS = 1_000;
/** A scrape during a database outage still answers (without the queue) within this. */
const QUEUE_DEADLINE_MS = 1_000;

const SECONDS_SHORT = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
// From an event to its delivery: milliseconds when all is well, up to the 24 hours of retries.
const SECONDS_LAG = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 3 * 3600, 12 * 3600, 86400];

/**
 * The process's Prometheus metrics (docs/operations.md: Metrics and alerts), served at GET /metrics (and by
 * `signery worker` on METRICS_PORT). One per app, passed to whoever measures (Deps.metrics): no
 * module-level registry, so each test's app counts its own. Label values are a few fixed words (job
 * types, outcomes, levels), never ids, URLs or tokens.
 *
 * ```ts
 * const metrics = new Metrics({ queue: () => readQueueStats(db, clock.now()) });
 * metrics.webhookAttempt('success', lagSeconds);
 * reply.send(await metrics.registry.metrics());
 * ```
 */
export class Metrics implements JobMetrics {
  readonly registry = new Registry();
  readonly #webhookLag: Histogram;
  readonly #webhookAttempts: Counter<'outcome'>;
  readonly #tsaDuration: Histogram<'outcome'>;
  readonly #tsaFailures: Counter<'reason'>;
  readonly #revocationDuration: Histogram<'kind' | 'outcome'>;
  readonly #revocationFailures: Counter<'kind'>;
  readonly #signatureDuration: Histogram<'operation' | 'level'>;
  readonly #jobRuns: Counter<'type' | 'outcome'>;
  readonly #jobDuration: Histogram<'type'>;
  readonly #queue: QueueProbe | undefined;

  constructor(options: MetricsOptions = {}) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.#webhookLag = new Histogram({
      name: 'signery_webhook_delivery_lag_seconds',
      help: 'Time from an event to its successful delivery to a webhook',
      buckets: SECONDS_LAG,
      registers,
    });
    this.#webhookAttempts = new Counter({
      name: 'signery_webhook_attempts_total',
      help: 'Webhook delivery attempts: success (2xx), failure (retried later), dead (failed for good)',
      labelNames: ['outcome'],
      registers,
    });
    this.#tsaDuration = new Histogram({
      name: 'signery_tsa_request_duration_seconds',
      help: 'Time-stamp authority (RFC 3161) requests, by outcome (success, failure)',
      labelNames: ['outcome'],
      buckets: SECONDS_SHORT,
      registers,
    });
    this.#tsaFailures = new Counter({
      name: 'signery_tsa_failures_total',
      help: 'Time-stamp authority requests that gave no token, by reason (timeout, unreachable, http, refused, invalid)',
      labelNames: ['reason'],
      registers,
    });
    this.#revocationDuration = new Histogram({
      name: 'signery_revocation_request_duration_seconds',
      help: 'Time of OCSP requests and CRL downloads for PAdES B-LT, by kind (ocsp, crl) and outcome',
      labelNames: ['kind', 'outcome'],
      buckets: SECONDS_SHORT,
      registers,
    });
    this.#revocationFailures = new Counter({
      name: 'signery_revocation_failures_total',
      help: 'OCSP requests and CRL downloads that failed (no answer, refused, time-out), by kind',
      labelNames: ['kind'],
      registers,
    });
    this.#signatureDuration = new Histogram({
      name: 'signery_signature_duration_seconds',
      help: 'Time to make a PAdES signature with the organisation key (time-stamps included), by operation (seal, sign) and level requested',
      labelNames: ['operation', 'level'],
      buckets: SECONDS_SHORT,
      registers,
    });
    this.#jobRuns = new Counter({
      name: 'signery_job_runs_total',
      help: 'Job runs by type and outcome (done, retry, dead, lost)',
      labelNames: ['type', 'outcome'],
      registers,
    });
    this.#jobDuration = new Histogram({
      name: 'signery_job_run_duration_seconds',
      help: 'Time from a job run’s start to its outcome being written, by type',
      labelNames: ['type'],
      buckets: SECONDS_SHORT,
      registers,
    });
    this.#queue = options.queue && new QueueProbe(options.queue);
    if (this.#queue) queueGauges(this.#queue, registers);
  }

  /** One delivery attempt; `lagSeconds` (from the event) when it succeeded. */
  webhookAttempt(outcome: WebhookAttemptOutcome, lagSeconds?: number): void {
    this.#webhookAttempts.inc({ outcome });
    if (outcome === 'success' && lagSeconds !== undefined && Number.isFinite(lagSeconds))
      this.#webhookLag.observe(Math.max(0, lagSeconds));
  }

  /** Pass as RequestTimestampOptions.observe. */
  /** An OCSP request or CRL download for PAdES B-LT: its duration and whether it failed. */
  readonly observeRevocation: RevocationObserver = (kind, seconds, failed) => {
    this.#revocationDuration.observe({ kind, outcome: failed ? 'failure' : 'success' }, seconds);
    if (failed) this.#revocationFailures.inc({ kind });
  };

  readonly observeTsa: TsaObserver = (seconds: number, failure: TsaFailure | null) => {
    this.#tsaDuration.observe({ outcome: failure === null ? 'success' : 'failure' }, seconds);
    if (failure !== null) this.#tsaFailures.inc({ reason: failure });
  };

  signatureMade(operation: SignatureOperation, level: PadesLevel, seconds: number): void {
    this.#signatureDuration.observe({ operation, level }, seconds);
  }

  jobEnded(type: string, outcome: SettleOutcome['outcome'], seconds: number): void {
    this.#jobRuns.inc({ type, outcome });
    this.#jobDuration.observe({ type }, seconds);
  }
}

/**
 * The queue's numbers for the gauges: read once for all of them and kept QUEUE_CACHE_MS, so a scrape
 * storm costs one query a second. A read that fails, or gives no answer within QUEUE_DEADLINE_MS (a
 * partition), leaves the queue out of that scrape (`signery_database_up` 0) instead of failing it;
 * while it still hangs no other read starts, so a partition does not tie up a connection per scrape.
 * A type seen once keeps its series, at zero when it has no unfinished job left.
 */
class QueueProbe {
  readonly #read: () => Promise<QueueTypeStats[]>;
  readonly #seen = new Set<string>();
  #last: { at: number; stats: Promise<QueueTypeStats[] | undefined> } | undefined;
  #hanging = false;

  constructor(read: () => Promise<QueueTypeStats[]>) {
    this.#read = read;
  }

  stats(): Promise<QueueTypeStats[] | undefined> {
    const now = Date.now();
    if (this.#last && now - this.#last.at < QUEUE_CACHE_MS) return this.#last.stats;
    let stats: Promise<QueueTypeStats[] | undefined> = Promise.resolve(undefined);
    if (!this.#hanging) {
      this.#hanging = true;
      const reading = this.#read().finally(() => {
        this.#hanging = false;
      });
      stats = withDeadline(reading, QUEUE_DEADLINE_MS).then(
        (read) => this.#withSeen(read),
        () => undefined,
      );
    }
    this.#last = { at: now, stats };
    return stats;
  }

  #withSeen(read: QueueTypeStats[]): QueueTypeStats[] {
    for (const { type } of read) this.#seen.add(type);
    const present = new Set(read.map(({ type }) => type));
    const gone = [...this.#seen].filter((type) => !present.has(type));
    return [
      ...read,
      ...gone.map((type) => ({
        type,
        jobs: { ready: 0, delayed: 0, waiting: 0, running: 0 },
        oldestReadySeconds: 0,
        failing: 0,
        dead: 0,
      })),
    ];
  }
}

/** The gauges read from the queue at scrape time. */
function queueGauges(probe: QueueProbe, registers: Registry[]): void {
  new Gauge({
    name: 'signery_database_up',
    help: 'Whether the job queue could be read for this scrape (1) or not (0: the database is unreachable or slow)',
    registers,
    async collect() {
      this.set((await probe.stats()) ? 1 : 0);
    },
  });
  new Gauge({
    name: 'signery_jobs',
    help: 'Unfinished jobs by type and state: ready (due), delayed (later run or retry), waiting (behind an earlier job of its lane), running',
    labelNames: ['type', 'state'],
    registers,
    async collect() {
      this.reset();
      for (const { type, jobs } of (await probe.stats()) ?? [])
        for (const state of JOB_STATES) this.set({ type, state }, jobs[state]);
    },
  });
  new Gauge({
    name: 'signery_jobs_oldest_ready_age_seconds',
    help: 'How long the longest-waiting due job of each type has waited for a worker (0 when none is due)',
    labelNames: ['type'],
    registers,
    async collect() {
      this.reset();
      for (const { type, oldestReadySeconds } of (await probe.stats()) ?? [])
        this.set({ type }, oldestReadySeconds);
    },
  });
  new Gauge({
    name: 'signery_jobs_failing',
    help: 'Unfinished jobs whose last attempt failed, by type (webhook.deliver: deliveries being retried)',
    labelNames: ['type'],
    registers,
    async collect() {
      this.reset();
      for (const { type, failing } of (await probe.stats()) ?? []) this.set({ type }, failing);
    },
  });
  new Gauge({
    name: 'signery_jobs_dead',
    help: 'Jobs that failed for good or were cancelled, by type, kept until purged (signery jobs list --state dead; signery jobs retry runs them again)',
    labelNames: ['type'],
    registers,
    async collect() {
      this.reset();
      for (const { type, dead } of (await probe.stats()) ?? []) this.set({ type }, dead);
    },
  });
}
