import { createClient } from '@redis/client';
import type { RedisConfig } from '../../base/config.js';
import type { RateLimitStore, WindowCount } from './rate-limit-store.js';

/** How long start-up waits for Redis before giving up. */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * A client that fails commands at once while disconnected (rather than queueing them) and, once it has
 * connected, reconnects in the background with a growing delay; before that, a failed connection is final.
 */
function newClient(config: RedisConfig, hasConnected: () => boolean) {
  return createClient({
    url: config.url,
    keyPrefix: config.keyPrefix,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: CONNECT_TIMEOUT_MS,
      reconnectStrategy: (retries, cause) => (hasConnected() ? Math.min(100 * 2 ** retries, 5_000) : cause),
    },
  });
}

type Client = ReturnType<typeof newClient>;

/**
 * Rate-limit counts in Redis (REDIS_URL): one key per bucket and window, `INCRBY` then `PEXPIRE`
 * (two windows, so a key outlives its window a little and then goes by itself), all the buckets a
 * node counted in one `MULTI` round trip about once a second. Keys carry REDIS_KEY_PREFIX, so
 * installations sharing one Redis keep apart.
 *
 * ```ts
 * const store = await RedisRateLimitStore.connect({ url: 'redis://127.0.0.1:6379', keyPrefix: 'signery:' });
 * const [total] = await store.add([{ bucket, windowStartMs, delta: 3 }], 60_000);
 * ```
 */
export class RedisRateLimitStore implements RateLimitStore {
  readonly #client: Client;

  private constructor(client: Client) {
    this.#client = client;
  }

  /**
   * Connects, or throws when Redis does not answer within 5 s: a wrong REDIS_URL should stop the
   * start, not be found out later. Once started, a lost connection is opened again in the
   * background, and meanwhile `add` fails at once (no queue of commands waiting for it).
   */
  static async connect(config: RedisConfig): Promise<RedisRateLimitStore> {
    let connected = false;
    const client = newClient(config, () => connected);
    // Without a listener an 'error' event would end the process. Each reconnection attempt emits one:
    // the limiter reports the failed adds instead, once per outage.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (error) {
      client.destroy();
      throw new Error(
        `Redis (REDIS_URL) did not answer: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    connected = true;
    return new RedisRateLimitStore(client);
  }

  async add(counts: readonly WindowCount[], windowMs: number): Promise<number[]> {
    if (counts.length === 0) return [];
    const multi = this.#client.multi();
    for (const c of counts) {
      const key = `ratelimit:${c.bucket}:${c.windowStartMs}`;
      multi.incrBy(key, c.delta);
      multi.pExpire(key, 2 * windowMs);
    }
    const replies = await multi.exec();
    return counts.map((_c, i) => Number(replies[2 * i]));
  }

  async sweep(): Promise<void> {
    // Keys expire by themselves (PEXPIRE in `add`).
  }

  async close(): Promise<void> {
    await this.#client.close();
  }
}
