import type { Deps } from '../deps.js';
import { RateLimited } from '../errors.js';

/**
 * Brute-force throttling of password and second-factor attempts, kept in the database so every
 * node sees the same counts. A key is an account (`account:<tenant>/<name>`), a client address
 * (`address:<ip>`) or a second factor (`mfa:<userId>`).
 */
export interface ThrottleKey {
  key: string;
  max: number;
}

/** Throws RateLimited (with Retry-After) when any key has used up its failures in the current window. */
export async function assertNotThrottled(deps: Deps, keys: ThrottleKey[]): Promise<void> {
  const rows = await deps.db
    .selectFrom('login_failures')
    .selectAll()
    .where(
      'key',
      'in',
      keys.map((k) => k.key),
    )
    .execute();
  const now = deps.clock.now().getTime();
  const windowMs = deps.config.loginWindowSeconds * 1000;
  for (const row of rows) {
    const max = keys.find((k) => k.key === row.key)?.max ?? Infinity;
    const windowEnd = new Date(row.window_start).getTime() + windowMs;
    if (row.failures >= max && windowEnd > now) {
      throw new RateLimited('Too many failed attempts; try again later', (windowEnd - now) / 1000);
    }
  }
}

/** Counts one failure on each key, starting a new window when the old one has passed. */
export async function countFailure(deps: Deps, keys: ThrottleKey[]): Promise<void> {
  const now = deps.clock.now();
  const windowStart = new Date(now.getTime() - deps.config.loginWindowSeconds * 1000).toISOString();
  for (const { key } of keys) {
    await deps.db
      .insertInto('login_failures')
      .values({ key, failures: 1, window_start: now.toISOString() })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet((eb) => ({
          failures: eb
            .case()
            .when('login_failures.window_start', '<', windowStart)
            .then(1)
            .else(eb('login_failures.failures', '+', 1))
            .end(),
          window_start: eb
            .case()
            .when('login_failures.window_start', '<', windowStart)
            .then(now.toISOString())
            .else(eb.ref('login_failures.window_start'))
            .end(),
        })),
      )
      .execute();
  }
}

export async function clearFailures(deps: Deps, key: string): Promise<void> {
  await deps.db.deleteFrom('login_failures').where('key', '=', key).execute();
}
