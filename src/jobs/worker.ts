import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import type { Clock } from '../base/clock.js';
import { writeTransaction, type SqlDialect } from '../store/db/dialect.js';
import type { Database } from '../store/db/schema.js';
import { listenToDoorbell } from './doorbell.js';
import { JobReport, messageOf, SILENT, type JobLogger, type JobMetrics } from './job-report.js';
import { runLane, type LaneWorker } from './lane-run.js';
import {
  claimJobs,
  completeJob,
  extendLease,
  failJob,
  releaseHeldJobs,
  releaseJob,
  type ClaimedJob,
  type FailOutcome,
  type HandOff,
  LOST,
  type SettleOutcome,
  type Settlement,
} from './queue.js';
import { SettlementQueue } from './settlement-queue.js';
import { currentTick, enqueueTick, scheduleJobType, type Schedule } from './schedules.js';

/** What a handler may do with the job it runs. */
export interface JobContext {
  readonly workerId: string;
  /**
   * Marks the job done inside `trx`, so it commits together with the handler's own writes (a
   * delivery attempt and its outcome). False when the claim was lost. An error of that transaction
   * must reach the worker (let it propagate): the worker then treats the job as failed.
   */
  complete(trx: Kysely<Database>): Promise<boolean>;
  /** Records the failure inside `trx`: a retry later, or `dead` (see failJob). */
  fail(trx: Kysely<Database>, error: string, options?: { retry?: boolean }): Promise<FailOutcome>;
  /**
   * Settles the job, done (`error` null) or failed, together with one row of the handler's own (a
   * delivery attempt). Settlements of this worker's jobs that finish together are written
   * together (SettlementQueue: one statement or one transaction for all). An error must reach the
   * worker, as with `complete`.
   */
  settle(settlement: Settlement): Promise<SettleOutcome>;
}

/**
 * Runs one job. A handler that returns without settling the job completes it; one that throws
 * fails it with the error's message (retried with backoff).
 */
export type JobHandler = (job: ClaimedJob, context: JobContext) => Promise<void>;

export interface WorkerDeps {
  db: Kysely<Database>;
  dialect: SqlDialect;
  clock: Clock;
}

export interface WorkerOptions {
  /** How often an idle worker looks for due jobs (and retries coming due). Default 200 ms. */
  pollIntervalMs?: number;
  /** Jobs run at once by this worker. Default 16. */
  concurrency?: number;
  /** How long a claim lasts without renewal; a running job renews it every third of it. Default 15 s. */
  leaseMs?: number;
  /** Names this worker in `jobs.locked_by`. Default host/pid/random. */
  id?: string;
  /**
   * Wake-ups from other processes (DatabaseHandle.listenForJobs on PostgreSQL): jobs enqueued on
   * another node are then claimed at once, not at the next poll.
   */
  wakeUps?: ((wake: () => void, onError: (error: unknown) => void) => () => void) | undefined;
  /** Where each job's start and outcome are logged (with its request id, see JobReport). */
  logger?: JobLogger;
  /** Hears each job's outcome and duration. */
  metrics?: JobMetrics | undefined;
}

// After a wake-up that found nothing: the enqueuing transaction may not have committed yet.
const RECHECK_MS = 20;
const MAX_ERROR_PAUSE_MS = 5_000;
// Expired leases are looked for this often (wall time), not at every claim: a dead worker's job
// waits for its lease anyway, and the claim stays one statement.
const SWEEP_EVERY_MS = 1_000;

/**
 * A job worker: polls the `jobs` table, runs up to `concurrency` handlers at once, and stops
 * gracefully. Any number of workers, in one process or many nodes, may share a database.
 *
 * ```ts
 * const worker = new Worker(deps, { logger: app.log });
 * worker.register('webhook.deliver', async (job, context) => { … });
 * worker.every('webhooks.purge', 3_600_000, async () => { … });
 * worker.start();
 * …
 * await worker.stop(); // no new claims; waits for the handlers running now
 * ```
 */
export class Worker {
  readonly id: string;
  readonly #deps: WorkerDeps;
  readonly #pollIntervalMs: number;
  readonly #concurrency: number;
  readonly #leaseMs: number;
  readonly #log: JobLogger;
  readonly #metrics: JobMetrics | undefined;
  readonly #wakeUps: WorkerOptions['wakeUps'];
  readonly #handlers = new Map<string, JobHandler>();
  /** Types registered with `runAhead`. */
  readonly #aheadTypes = new Set<string>();
  readonly #schedules: { schedule: Schedule; lastTick: number }[] = [];
  readonly #running = new Set<Promise<void>>();
  readonly #stopHooks: (() => Promise<void>)[] = [];
  readonly #settlements: SettlementQueue;
  /** What a lane run uses of this worker: the same lease renewal, hand-off and failure path as #runOne. */
  readonly #lane: LaneWorker;
  #loop: Promise<void> | undefined;
  #stopping = false;
  #stopped: Promise<void> | undefined;
  #woken = false;
  #wakeSleeper: (() => void) | undefined;
  #unlisten: (() => void)[] = [];
  #consecutiveErrors = 0;
  #lastSweep = 0;

  constructor(deps: WorkerDeps, options: WorkerOptions = {}) {
    this.#deps = deps;
    this.#settlements = new SettlementQueue(deps);
    this.#pollIntervalMs = options.pollIntervalMs ?? 200;
    this.#concurrency = Math.max(1, options.concurrency ?? 16);
    this.#leaseMs = options.leaseMs ?? 15_000;
    this.#log = options.logger ?? SILENT;
    this.#metrics = options.metrics;
    this.#wakeUps = options.wakeUps;
    this.id = options.id ?? `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`;
    this.#lane = {
      id: this.id,
      db: this.#deps.db,
      settlements: this.#settlements,
      log: this.#log,
      report: (job) => new JobReport(this.#log, this.#metrics, job),
      aheadTypes: this.#aheadTypes,
      handler: (type) => this.#handlers.get(type),
      stopping: () => this.#stopping,
      handOff: (take) => this.#handOff(take),
      keepLease: (held) => this.#keepLease(held),
      failAlone: (job, message) => this.#failAlone(job, message),
    };
  }

  /**
   * Registers the handler of one job type (one handler per type). With `runAhead`, jobs of a lane
   * run one after the other without waiting for each settlement to be written (see runLane); the
   * handler then settles through `context.settle` only (or by returning or throwing).
   */
  register(type: string, handler: JobHandler, options: { runAhead?: boolean } = {}): this {
    if (this.#handlers.has(type)) throw new Error(`a handler for ${type} is already registered`);
    this.#handlers.set(type, handler);
    if (options.runAhead) this.#aheadTypes.add(type);
    return this;
  }

  /**
   * Runs `handler` once per tick of `intervalMs` across every node sharing the database (see
   * schedules.ts). The handler gets the tick's start time.
   */
  every(name: string, intervalMs: number, handler: (tick: Date) => Promise<void>): this {
    if (!Number.isInteger(intervalMs) || intervalMs < 1000)
      throw new Error('a schedule interval is a whole number of milliseconds, at least 1000');
    this.register(scheduleJobType(name), async (job) => {
      await handler(new Date(String(job.payload.tick)));
    });
    this.#schedules.push({ schedule: { name, intervalMs }, lastTick: -1 });
    return this;
  }

  /** Runs after `stop()` has waited for the handlers: handlers release what they hold here. */
  onStop(hook: () => Promise<void>): this {
    this.#stopHooks.push(hook);
    return this;
  }

  /** Starts polling; also woken at once by enqueues in this process (and others', with `wakeUps`). */
  start(): void {
    if (this.#loop) return;
    this.#stopping = false;
    this.#stopped = undefined;
    const wake = () => this.wake();
    this.#unlisten = [listenToDoorbell(wake)];
    const stopWakeUps = this.#wakeUps?.(wake, (error) => {
      this.#log.warn({ err: error, workerId: this.id }, 'lost the wake-up connection; polling meanwhile');
    });
    if (stopWakeUps) this.#unlisten.push(stopWakeUps);
    this.#loop = this.#run();
  }

  /** Looks for due jobs now rather than at the next poll (tests call it after moving the clock). */
  wake(): void {
    this.#woken = true;
    this.#wakeSleeper?.();
  }

  /**
   * Stops claiming at once, then waits for the handlers running now to finish; with `releaseAfterMs`
   * (a shutdown's drain), for that long at most: the jobs still held then go back to the queue, due at
   * once for other workers (their handlers' late settlements are ignored: the claim is gone). Calling
   * it again returns the same stop.
   */
  stop(options: { releaseAfterMs?: number } = {}): Promise<void> {
    this.#stopped ??= this.#stop(options.releaseAfterMs);
    return this.#stopped;
  }

  async #stop(releaseAfterMs: number | undefined): Promise<void> {
    this.#stopping = true;
    for (const unlisten of this.#unlisten.splice(0)) unlisten();
    this.wake();
    await this.#loop;
    this.#loop = undefined;
    const handlers = Promise.allSettled([...this.#running]);
    if (releaseAfterMs === undefined || (await settledWithin(handlers, releaseAfterMs))) await handlers;
    else await this.#releaseHeld();
    for (const hook of this.#stopHooks) await hook();
  }

  async #releaseHeld(): Promise<void> {
    const released = await releaseHeldJobs(this.#deps.db, this.id, this.#deps.clock.now()).catch(
      (error: unknown) => {
        // Their leases run out and they are claimed again.
        this.#log.error({ err: error, workerId: this.id }, 'could not give back the jobs still running');
        return [];
      },
    );
    if (released.length > 0) {
      this.#log.warn(
        { workerId: this.id, jobIds: released },
        `stopping: ${released.length} job(s) still running at the end of the drain went back to the queue`,
      );
    }
  }

  /**
   * Claims and runs due jobs until none is left, waiting for each batch: a way to drive the queue
   * by hand in tests, without `start()`. Returns how many jobs ran.
   */
  async runDue(): Promise<number> {
    let total = 0;
    for (;;) {
      const claimed = await this.#pollOnce();
      await Promise.allSettled([...this.#running]);
      if (claimed === 0) return total;
      total += claimed;
    }
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      const woken = this.#woken;
      this.#woken = false;
      let claimed = 0;
      try {
        claimed = await this.#pollOnce();
        this.#consecutiveErrors = 0;
      } catch (error) {
        this.#consecutiveErrors += 1;
        this.#log.error({ err: error, workerId: this.id }, 'job worker could not poll the queue');
      }
      if (this.#stopping) break;
      // A full batch suggests more is due; a slot freed or a wake-up meanwhile also polls at once.
      if (claimed > 0 && this.#running.size < this.#concurrency) continue;
      if (this.#woken) continue;
      const pause =
        this.#consecutiveErrors > 0
          ? Math.min(MAX_ERROR_PAUSE_MS, this.#pollIntervalMs * 2 ** this.#consecutiveErrors)
          : woken && claimed === 0
            ? RECHECK_MS
            : this.#pollIntervalMs;
      await this.#sleep(pause);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wakeSleeper = undefined;
        resolve();
      };
      // Unref'd: the worker never keeps a process alive by itself (the server or a test does).
      const timer = setTimeout(done, ms);
      timer.unref();
      this.#wakeSleeper = done;
    });
  }

  async #pollOnce(): Promise<number> {
    const free = this.#concurrency - this.#running.size;
    if (free <= 0) return 0;
    const now = this.#deps.clock.now();
    await this.#enqueueTicks(now);
    const sweep = Date.now() - this.#lastSweep >= SWEEP_EVERY_MS;
    const jobs = await claimJobs(this.#deps.db, this.#deps.dialect, {
      workerId: this.id,
      types: [...this.#handlers.keys()],
      limit: free,
      now,
      leaseMs: this.#leaseMs,
      sweep,
    });
    if (sweep) this.#lastSweep = Date.now();
    for (const job of jobs) this.#launch(job);
    return jobs.length;
  }

  async #enqueueTicks(now: Date): Promise<void> {
    for (const entry of this.#schedules) {
      const tick = currentTick(entry.schedule, now);
      if (tick.getTime() <= entry.lastTick) continue;
      await enqueueTick(this.#deps.db, entry.schedule, tick, now);
      entry.lastTick = tick.getTime();
    }
  }

  #launch(job: ClaimedJob): void {
    const running: Promise<void> = this.#execute(job).finally(() => {
      this.#running.delete(running);
      // A slot is free, and finishing a lane's head may have made its next job due.
      this.wake();
    });
    this.#running.add(running);
  }

  /** Runs a job, then the jobs of its lane handed to this worker as each one finishes. */
  async #execute(first: ClaimedJob): Promise<void> {
    let job: ClaimedJob | undefined = first;
    while (job) {
      const runsAhead: boolean = job.orderingSeq !== null && this.#aheadTypes.has(job.type);
      job = runsAhead ? await runLane(this.#lane, job) : await this.#runOne(job);
    }
  }

  async #runOne(job: ClaimedJob): Promise<ClaimedJob | undefined> {
    const { db, dialect, clock } = this.#deps;
    const handler = this.#handlers.get(job.type);
    const report = new JobReport(this.#log, this.#metrics, job);
    let settled = false;
    // How the handler settled the job (it counts once its transaction commits: else it throws).
    let outcome: SettleOutcome = LOST;
    let failure: string | null = null;
    let next: ClaimedJob | undefined;
    const handOff = () =>
      this.#handOff((taken) => {
        next = taken;
      });
    const context: JobContext = {
      workerId: this.id,
      complete: async (trx) => {
        settled = true;
        const done = await completeJob(trx, job, clock.now(), handOff());
        outcome = done ? DONE : LOST;
        return done;
      },
      fail: async (trx, error, options) => {
        settled = true;
        failure = error;
        const failed = await failJob(trx, job, error, clock.now(), { ...options, handOff: handOff() });
        outcome = failed;
        return failed;
      },
      settle: async (settlement) => {
        settled = true;
        failure = settlement.error;
        const written = await this.#settlements.settle({ job, settlement, handOff: handOff() });
        outcome = written.outcome;
        return written.outcome;
      },
    };
    const stopRenewing = this.#keepLease(() => job);
    try {
      if (!handler) throw new Error(`no handler for job type ${job.type}`);
      await handler(job, context);
      if (!settled) {
        const done = await writeTransaction(db, dialect, (trx) =>
          completeJob(trx, job, clock.now(), handOff()),
        );
        outcome = done ? DONE : LOST;
      }
      report.ended(outcome, failure);
      return next;
    } catch (error) {
      const message = messageOf(error);
      // Whether the handler's transaction committed is unknown: a job it may have taken over goes back.
      if (next) await this.#giveBack(next);
      // Settling is conditional on the claim: after a handler that already settled, this is a no-op.
      report.ended(await this.#failAlone(job, message), message);
      return undefined;
    } finally {
      stopRenewing();
    }
  }

  /** Lets a job's settlement hand this worker its lane's next job; none while stopping (others take it). */
  #handOff(take: HandOff['take']): HandOff | undefined {
    if (this.#stopping) return undefined;
    return { workerId: this.id, leaseMs: this.#leaseMs, types: [...this.#handlers.keys()], take };
  }

  /** Renews the lease of the claim `held()` names every third of a lease; returns how to stop. */
  #keepLease(held: () => ClaimedJob): () => void {
    const { db, clock } = this.#deps;
    const heartbeat = setInterval(() => {
      const job = held();
      extendLease(db, job, clock.now(), this.#leaseMs).catch((error: unknown) => {
        this.#log.warn({ err: error, jobId: job.id }, 'could not renew a job lease');
      });
    }, this.#leaseMs / 3);
    heartbeat.unref();
    return () => clearInterval(heartbeat);
  }

  /**
   * Records a claimed job's failure in a transaction of its own (retried later, or dead); `lost` when
   * the claim was lost or the write failed.
   */
  async #failAlone(job: ClaimedJob, message: string): Promise<SettleOutcome> {
    const { db, dialect, clock } = this.#deps;
    return writeTransaction(db, dialect, (trx) => failJob(trx, job, message, clock.now())).catch(
      (error: unknown) => {
        // The job stays `running` until its lease expires, then runs again (at-least-once).
        this.#log.error({ err: error, jobId: job.id }, 'could not record a job failure');
        return LOST;
      },
    );
  }

  async #giveBack(job: ClaimedJob): Promise<void> {
    await releaseJob(this.#deps.db, job, this.#deps.clock.now()).catch((error: unknown) => {
      // Its lease runs out and it is claimed again.
      this.#log.error({ err: error, jobId: job.id }, 'could not give back a job');
    });
  }
}

const DONE: SettleOutcome = { outcome: 'done' };

/** Whether `work` settles within `ms` (it goes on either way). */
async function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}
