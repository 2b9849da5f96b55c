import { createHash } from 'node:crypto';
import type { Clock } from '../base/clock.js';
import { withDeadline } from '../base/deadline.js';
import type { RateLimitStore, WindowCount } from '../store/rate-limits/rate-limit-store.js';

/** A limit shared by every bucket of one kind (every API key, every client address). */
export interface RateLimitPolicy {
  /** Names the policy in the RateLimit-Policy and RateLimit header fields. */
  readonly name: string;
  /** Requests allowed in one window. */
  readonly limit: number;
}

/** What counting one request decided. */
export interface RateLimitVerdict {
  allowed: boolean;
  /** Requests left in the window after this one; 0 once the limit is reached. */
  remaining: number;
  /** Whole seconds until the window ends and the count starts again (at least 1). */
  resetSeconds: number;
}

/** pino's shape (Fastify's logger fits), so the limiter does not depend on Fastify. */
export interface RateLimiterLogger {
  warn(details: Record<string, unknown>, message: string): void;
  info(details: Record<string, unknown>, message: string): void;
}

export interface RateLimiterOptions {
  store: RateLimitStore;
  clock: Clock;
  /** Length of every window, in seconds (fixed windows, aligned on multiples of it). */
  windowSeconds: number;
  /** How often the counts are added to the store and the totals read back. */
  syncMs: number;
  logger?: RateLimiterLogger | undefined;
}

/**
 * The last tenth of a limit (at least one request) is counted against fresh totals: a request
 * there waits for this node's counts to be added and the cluster's total read back. Below it, a
 * node decides from the totals of its last sync, so most requests never wait for the store.
 */
const NEAR_LIMIT_SHARE = 0.1;
/** A request near its limit waits at most this for the store; then the local count decides. */
const NEAR_LIMIT_WAIT_MS = 250;
/**
 * A store that has not answered an addition within this is taken as failed: the counts are sent again
 * with the next sync (should the late answer still land, they count twice, erring on the safe side).
 */
const STORE_DEADLINE_MS = 5_000;

/** One bucket's counts in one window, as this node knows them. */
class Bucket {
  /** The cluster's total at the last sync: every node's counts, this node's added ones included. */
  synced = 0;
  /** Counted here and being added to the store. */
  inFlight = 0;
  /** Counted here, not yet sent. */
  pending = 0;
  /** The sync under way that carries this bucket, for a request near the limit to wait on. */
  syncing: Promise<void> | undefined;

  constructor(
    /** SHA-256 (hex) of the policy and what it limits: the name the store knows it by. */
    readonly id: string,
    readonly windowStartMs: number,
  ) {}

  get used(): number {
    return this.synced + this.inFlight + this.pending;
  }
}

/**
 * Fixed-window request counting shared by the nodes of an installation without a write per request.
 * Each node counts in memory and, every `syncMs` (about a second), adds what it counted to the store
 * in one round trip and reads back every bucket's total over all nodes; a bucket in the last tenth
 * of its limit syncs before answering. A caller spreading requests over several nodes is therefore
 * held to the limit give or take what the other nodes let through during one sync interval.
 * Counted are all requests, refused ones included: a caller that keeps hammering stays refused
 * until the window ends.
 *
 * When the store fails, requests are still counted locally (each node then enforces the limit on its
 * own counts) and the counts are sent again at the next sync.
 *
 * ```ts
 * const limiter = new RateLimiter({ store, clock, windowSeconds: 60, syncMs: 1000 });
 * const verdict = await limiter.take({ name: 'api-key', limit: 1000 }, tokenId);
 * if (!verdict.allowed) // 429, Retry-After: verdict.resetSeconds
 * ```
 */
export class RateLimiter {
  readonly #store: RateLimitStore;
  readonly #clock: Clock;
  readonly #windowMs: number;
  readonly #log: RateLimiterLogger | undefined;
  readonly #buckets = new Map<string, Bucket>();
  readonly #timer: NodeJS.Timeout;
  #ticking: Promise<void> | undefined;
  #sweptWindowMs = 0;
  #failing = false;
  #closed = false;

  constructor(options: RateLimiterOptions) {
    this.#store = options.store;
    this.#clock = options.clock;
    this.#windowMs = options.windowSeconds * 1000;
    this.#log = options.logger;
    this.#timer = setInterval(() => void this.sync(), options.syncMs);
    this.#timer.unref();
  }

  /** Counts one request in the bucket of `policy` named by `key` and says whether it may go on. */
  take(policy: RateLimitPolicy, key: string): RateLimitVerdict | Promise<RateLimitVerdict> {
    const now = this.#clock.now().getTime();
    const windowStartMs = now - (now % this.#windowMs);
    const name = `${policy.name}:${key}`;
    let bucket = this.#buckets.get(name);
    if (!bucket || bucket.windowStartMs !== windowStartMs) {
      bucket = new Bucket(createHash('sha256').update(name).digest('hex'), windowStartMs);
      this.#buckets.set(name, bucket);
    }
    bucket.pending += 1;
    const margin = Math.max(1, Math.ceil(policy.limit * NEAR_LIMIT_SHARE));
    const used = bucket.used;
    if (used <= policy.limit - margin || used > policy.limit) return this.#verdict(policy, bucket, now);
    return this.#syncNearLimit(bucket).then(() => this.#verdict(policy, bucket, now));
  }

  /**
   * Adds every count not yet sent to the store, reads the totals back, forgets past windows. Runs
   * every `syncMs` by itself; tests call it to sync at a known moment.
   */
  async sync(): Promise<void> {
    if (this.#ticking) return this.#ticking;
    this.#ticking = this.#tick().finally(() => (this.#ticking = undefined));
    return this.#ticking;
  }

  /** Stops syncing after sending what was counted, so that the other nodes keep this node's counts. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#ticking;
    await this.#tick();
  }

  #verdict(policy: RateLimitPolicy, bucket: Bucket, now: number): RateLimitVerdict {
    const used = bucket.used;
    return {
      allowed: used <= policy.limit,
      remaining: Math.max(0, policy.limit - used),
      resetSeconds: Math.max(1, Math.ceil((bucket.windowStartMs + this.#windowMs - now) / 1000)),
    };
  }

  /** Joins the sync that carries this bucket, or starts one; waits at most NEAR_LIMIT_WAIT_MS. */
  async #syncNearLimit(bucket: Bucket): Promise<void> {
    // #send never rejects; a sync that takes too long leaves the decision to the local count.
    await withDeadline(bucket.syncing ?? this.#send([bucket]), NEAR_LIMIT_WAIT_MS).catch(() => undefined);
  }

  async #tick(): Promise<void> {
    const now = this.#clock.now().getTime();
    const currentWindowMs = now - (now % this.#windowMs);
    const due: Bucket[] = [];
    for (const [name, bucket] of this.#buckets) {
      // A window that has ended no longer limits anything: what it still held unsent is dropped.
      if (bucket.windowStartMs < currentWindowMs) this.#buckets.delete(name);
      else if (bucket.pending > 0) due.push(bucket);
    }
    await this.#send(due);
    if (this.#sweptWindowMs !== currentWindowMs) {
      // The previous window is kept: a node whose clock runs a little late may still be counting in it.
      try {
        await this.#store.sweep(currentWindowMs - this.#windowMs);
        this.#sweptWindowMs = currentWindowMs;
      } catch (error) {
        this.#failed(error);
      }
    }
  }

  /** Sends the buckets' pending counts in one round trip and takes the totals the store answers. */
  #send(buckets: Bucket[]): Promise<void> {
    const batch = buckets.filter((b) => b.pending > 0);
    if (batch.length === 0) return Promise.resolve();
    const counts: WindowCount[] = batch.map((b) => {
      const delta = b.pending;
      b.pending = 0;
      b.inFlight += delta;
      return { bucket: b.id, windowStartMs: b.windowStartMs, delta };
    });
    const sending = withDeadline(this.#store.add(counts, this.#windowMs), STORE_DEADLINE_MS).then(
      (totals) => {
        batch.forEach((bucket, i) => {
          bucket.inFlight -= counts[i]!.delta;
          // Totals only grow within a window: of two answers arriving out of order, the larger is newer.
          bucket.synced = Math.max(bucket.synced, totals[i] ?? 0);
        });
        this.#recovered();
      },
      (error: unknown) => {
        batch.forEach((bucket, i) => {
          bucket.inFlight -= counts[i]!.delta;
          bucket.pending += counts[i]!.delta;
        });
        this.#failed(error);
      },
    );
    const syncing = sending.finally(() => {
      for (const bucket of batch) if (bucket.syncing === syncing) bucket.syncing = undefined;
    });
    for (const bucket of batch) bucket.syncing = syncing;
    return syncing;
  }

  #failed(error: unknown): void {
    if (this.#failing) return;
    this.#failing = true;
    this.#log?.warn(
      { err: error },
      'rate limits: the shared counts cannot be reached; each node limits on its own counts meanwhile',
    );
  }

  #recovered(): void {
    if (!this.#failing) return;
    this.#failing = false;
    this.#log?.info({}, 'rate limits: the shared counts are reachable again');
  }
}
