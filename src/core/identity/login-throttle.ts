import type { Deps } from '../deps.js';
import { RateLimited, Unauthenticated } from '../../base/errors.js';

/**
 * Brute-force throttling of password and second-factor attempts, kept in the database so every
 * node sees the same counts. A key is an account (`account:<tenant>/<name>`), a client address
 * (`address:<ip>`), a second factor (`mfa:<userId>`) or a share (`share:<shareId>`).
 *
 * DESIGN "Decided this round": a guess is reserved before its secret is checked, so parallel
 * attempts count. A reservation is one failure taken in advance by a single conditional upsert,
 * which the database applies atomically whichever node sends it; a wrong secret keeps it, anything
 * else gives it back or clears the key.
 */
export interface ThrottleKey {
  key: string;
  max: number;
}

/** The key of one client address, under the per-address limit of logins and sign-ins. */
export function addressKey(deps: Deps, address: string): ThrottleKey {
  return { key: `address:${address}`, max: deps.config.loginMaxFailuresPerAddress };
}

/**
 * The keys a password guess counts against (POST /login, and the password asked again to turn MFA
 * on): its account, by tenant and login name as POST /login spells them, and its client address.
 */
export function passwordKeys(
  deps: Deps,
  account: { tenant: string; name: string; address: string },
): { accountKey: string; keys: ThrottleKey[] } {
  const accountKey = `account:${account.tenant}/${account.name.trim().toLowerCase()}`;
  return {
    accountKey,
    keys: [
      { key: accountKey, max: deps.config.loginMaxFailuresPerAccount },
      addressKey(deps, account.address),
    ],
  };
}

/**
 * Throws RateLimited (with Retry-After) when any key has used up its failures in the current window,
 * without taking anything: for steps that lead to a guess but are none (sending a code, starting an
 * identity sign-in).
 */
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
    if (row.failures >= max && windowEnd > now) throw tooMany(windowEnd - now);
  }
}

/**
 * Reserves one attempt on every key, or none: throws RateLimited (with Retry-After) when a key has no
 * attempt left in its window, giving back what it took on the keys before.
 */
export async function reserveAttempt(deps: Deps, keys: ThrottleKey[]): Promise<void> {
  const taken: ThrottleKey[] = [];
  for (const key of keys) {
    if (!(await reserveOne(deps, key))) {
      await releaseAttempt(deps, taken);
      const row = await deps.db
        .selectFrom('login_failures')
        .select('window_start')
        .where('key', '=', key.key)
        .executeTakeFirst();
      const windowEnd = row
        ? new Date(row.window_start).getTime() + deps.config.loginWindowSeconds * 1000
        : deps.clock.now().getTime();
      throw tooMany(windowEnd - deps.clock.now().getTime());
    }
    taken.push(key);
  }
}

/**
 * One attempt more on `key`, starting a new window when the old one has passed, unless its window
 * already holds `max`: the condition and the increment are one statement, so no two requests can
 * take the last attempt. Answers whether it was taken.
 */
async function reserveOne(deps: Deps, { key, max }: ThrottleKey): Promise<boolean> {
  const now = deps.clock.now();
  const windowStart = new Date(now.getTime() - deps.config.loginWindowSeconds * 1000).toISOString();
  const row = await deps.db
    .insertInto('login_failures')
    .values({ key, failures: 1, window_start: now.toISOString() })
    .onConflict((oc) =>
      oc
        .column('key')
        .doUpdateSet((eb) => ({
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
        }))
        .where((eb) =>
          eb.or([
            eb('login_failures.window_start', '<', windowStart),
            eb('login_failures.failures', '<', max),
          ]),
        ),
    )
    .returning('failures')
    .executeTakeFirst();
  return row !== undefined;
}

/** Gives back one reserved attempt on each key: the attempt turned out to be no wrong guess. */
export async function releaseAttempt(deps: Deps, keys: ThrottleKey[]): Promise<void> {
  if (keys.length === 0) return;
  await deps.db
    .updateTable('login_failures')
    .set((eb) => ({ failures: eb('failures', '-', 1) }))
    .where(
      'key',
      'in',
      keys.map((k) => k.key),
    )
    .where('failures', '>', 0)
    .execute();
}

export async function clearFailures(deps: Deps, key: string): Promise<void> {
  await deps.db.deleteFrom('login_failures').where('key', '=', key).execute();
}

/**
 * Checks a guessed secret under the keys' limits: reserves an attempt on every key (RateLimited when
 * one has none left), then runs `check`. A check that throws a wrong guess (Unauthenticated, unless
 * `isWrong` says otherwise) keeps its reservation as the failure counted; any other error (a provider
 * that cannot be reached, a request that guessed nothing) gives it back. A check that answers
 * succeeded: the keys `clear` names for its answer are cleared, the others get their reservation back.
 */
export async function checkGuess<T>(
  deps: Deps,
  keys: ThrottleKey[],
  check: () => Promise<T>,
  options: { clear: (result: T) => string[]; isWrong?: (error: unknown) => boolean },
): Promise<T> {
  const isWrong = options.isWrong ?? ((error: unknown) => error instanceof Unauthenticated);
  await reserveAttempt(deps, keys);
  let result: T;
  try {
    result = await check();
  } catch (error) {
    if (!isWrong(error)) await releaseAttempt(deps, keys);
    throw error;
  }
  const cleared = options.clear(result);
  for (const key of cleared) await clearFailures(deps, key);
  await releaseAttempt(
    deps,
    keys.filter((k) => !cleared.includes(k.key)),
  );
  return result;
}

function tooMany(waitMs: number): RateLimited {
  return new RateLimited('Too many failed attempts; try again later', waitMs / 1000);
}
