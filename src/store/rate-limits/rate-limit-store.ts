/**
 * Where the nodes of an installation add up the requests they counted for the rate limits
 * (rate-limits/rate-limiter.ts), so that a caller spreading requests over several nodes meets one
 * limit. Two implementations: the database (default; store/rate-limits/database.ts) and Redis when
 * REDIS_URL is set (store/rate-limits/redis.ts).
 *
 * Contract shared by both (checked by test/http/rate-limits.test.ts):
 * - `add` adds each delta to its bucket's window and answers, in the same order, the window's total
 *   over every node after the addition, in one round trip however many buckets it carries;
 * - a bucket is the SHA-256 (hex) of what is limited: no token or key is ever handed to a store;
 * - windows that ended are forgotten (`sweep`, or an expiry the store keeps itself).
 *
 * ```ts
 * const [total] = await store.add([{ bucket, windowStartMs, delta: 12 }], 60_000);
 * ```
 */
export interface RateLimitStore {
  add(counts: readonly WindowCount[], windowMs: number): Promise<number[]>;
  /** Forgets the windows that started before `beforeMs` (a store whose keys expire does nothing). */
  sweep(beforeMs: number): Promise<void>;
  close(): Promise<void>;
}

/** Requests one node counted in one bucket's window since it last added them. */
export interface WindowCount {
  /** SHA-256 (hex) of the policy and what it limits. */
  bucket: string;
  /** The window's start, milliseconds since the epoch: a multiple of the window's length. */
  windowStartMs: number;
  delta: number;
}
