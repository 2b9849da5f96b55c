import type { Kysely } from 'kysely';
import type { Config } from '../../base/config.js';
import type { Database } from '../db/schema.js';
import { DatabaseRateLimitStore } from './database.js';
import type { RateLimitStore } from './rate-limit-store.js';
import { RedisRateLimitStore } from './redis.js';

/** Redis when REDIS_URL is set, otherwise the database every node already shares. */
export async function openRateLimitStore(config: Config, db: Kysely<Database>): Promise<RateLimitStore> {
  if (config.redis) return RedisRateLimitStore.connect(config.redis);
  return new DatabaseRateLimitStore(db);
}
