import type { Kysely } from 'kysely';
import type { Clock } from '../base/clock.js';
import type { SqlDialect } from '../store/db/dialect.js';
import type { Database } from '../store/db/schema.js';
import { settleJobs, type Settled, type SettleRequest, type SettleResult } from './queue.js';

interface Waiting {
  request: SettleRequest;
  resolve(settled: Settled): void;
  reject(error: unknown): void;
}

/** Settlements written together at most; the rest wait for the next write. */
const MAX_BATCH = 64;

/**
 * A worker's settlements, written together when they come faster than one write at a time (group
 * commit): the first is written at once; those that arrive while it is being written wait, and go
 * out together in the next write (settleJobs: one PostgreSQL statement, or one SQLite transaction).
 * An idle worker pays no delay; a busy one pays one round trip (or one fsync) for many jobs.
 *
 * ```ts
 * const settlements = new SettlementQueue({ db, dialect, clock });
 * const { outcome } = await settlements.settle({ job, settlement: { error: null } });
 * ```
 */
export class SettlementQueue {
  readonly #deps: { db: Kysely<Database>; dialect: SqlDialect; clock: Clock };
  readonly #write: typeof settleJobs;
  #waiting: Waiting[] = [];
  #writing = false;

  /** `write` is settleJobs; a test passes it wrapped, to see the batches. */
  constructor(
    deps: { db: Kysely<Database>; dialect: SqlDialect; clock: Clock },
    write: typeof settleJobs = settleJobs,
  ) {
    this.#deps = deps;
    this.#write = write;
  }

  /** Resolves with the outcomes once written; rejects with what kept the request from being written. */
  settle(request: SettleRequest): Promise<Settled> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ request, resolve, reject });
      if (!this.#writing) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#writing = true;
    try {
      while (this.#waiting.length > 0) {
        const batch = this.#nextBatch();
        const { db, dialect, clock } = this.#deps;
        const results = await this.#write(
          db,
          dialect,
          batch.map((waiting) => waiting.request),
          clock.now(),
        ).catch((error: unknown) =>
          batch.map((): SettleResult => ({
            ok: false,
            error: error instanceof Error ? error : new Error(String(error)),
          })),
        );
        batch.forEach((waiting, index) => {
          const result = results[index];
          if (result?.ok) waiting.resolve(result);
          else waiting.reject(result?.error ?? new Error('the settlement was not written'));
        });
      }
    } finally {
      this.#writing = false;
    }
  }

  /**
   * The waiting settlements in arrival order, up to MAX_BATCH, with at most one job per lane: a
   * second job of a lane (a claim that was lost and taken again) waits for the next write.
   */
  #nextBatch(): Waiting[] {
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    const lanes = new Set<string>();
    for (const waiting of this.#waiting) {
      const lane = waiting.request.job.orderingKey;
      if (batch.length >= MAX_BATCH || (lane !== null && lanes.has(lane))) {
        rest.push(waiting);
        continue;
      }
      if (lane !== null) lanes.add(lane);
      batch.push(waiting);
    }
    this.#waiting = rest;
    return batch;
  }
}
