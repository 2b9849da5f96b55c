import type { Kysely } from 'kysely';
import { readJson, writeJson } from '../../store/db/json.js';
import type { Database } from '../../store/db/schema.js';

/**
 * What a user's `config` may hold (spec: PUT /configuration "cannot change `authenticationFactors`,
 * `filters`, `password`, `configuration.photo` (dedicated endpoints exist)"). The configuration is a
 * JSON blob the user writes, so these keys are refused wherever they appear in it, at any depth and
 * in any letter case, and the Login answer shows it only through `shownConfig`, which leaves them out
 * again (a value stored before the rule held never comes back to anyone).
 */

/** The restricted keys, lower case, with the endpoint that changes each. */
const RESTRICTED: Record<string, string> = {
  password: 'PUT /users/{id} or the activation link',
  authenticationfactors: 'the MFA endpoints (/login/totp/*)',
  filters: 'the search endpoints',
  photo: 'PUT /users/{id} with a photo from POST /files/photo',
};

/** Deeper than this, a configuration is refused (and not shown): nobody's preferences nest so deep. */
export const CONFIG_MAX_DEPTH = 16;

export interface RestrictedKey {
  /** The field path, e.g. `configuration.notifications.password`. */
  path: string;
  /** What to use instead, or why it is refused. */
  use: string;
}

/** The first restricted key (or too deep a nesting) in `value`, by its field path under `root`. */
export function findRestrictedKey(value: unknown, root: string): RestrictedKey | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: root, depth: 0 }];
  while (stack.length > 0) {
    const next = stack.pop();
    if (!next || typeof next.value !== 'object' || next.value === null) continue;
    if (next.depth > CONFIG_MAX_DEPTH) {
      return { path: next.path, use: `at most ${CONFIG_MAX_DEPTH} levels of nesting` };
    }
    const entries: [string, unknown][] = Array.isArray(next.value)
      ? next.value.map((v, i) => [`[${i}]`, v])
      : Object.entries(next.value).map(([k, v]) => [`.${k}`, v]);
    for (const [step, child] of entries) {
      const path = `${next.path}${step}`;
      const use = step.startsWith('.') ? RESTRICTED[step.slice(1).toLowerCase()] : undefined;
      if (use) return { path, use };
      stack.push({ value: child, path, depth: next.depth + 1 });
    }
  }
  return undefined;
}

/** A copy of a stored configuration without restricted keys (at any depth) or what nests too deeply. */
export function shownConfig(config: Record<string, unknown>): Record<string, unknown> {
  return filtered(config, 0) as Record<string, unknown>;
}

function filtered(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth > CONFIG_MAX_DEPTH) return undefined;
  if (Array.isArray(value)) return value.map((v) => filtered(v, depth + 1) ?? null);
  const copy: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (RESTRICTED[key.toLowerCase()]) continue;
    const shown = filtered(child, depth + 1);
    if (shown !== undefined) copy[key] = shown;
  }
  return copy;
}

/** A user's `config` as stored, read in the caller's transaction before it is changed. */
export async function readUserConfig(
  trx: Kysely<Database>,
  userId: string,
): Promise<Record<string, unknown>> {
  const user = await trx
    .selectFrom('users')
    .select('config')
    .where('id', '=', userId)
    .executeTakeFirstOrThrow();
  return readJson<Record<string, unknown>>(user.config, {});
}

/** Writes a user's whole `config` back; with `updatedAt`, the account counts as modified then. */
export async function writeUserConfig(
  trx: Kysely<Database>,
  userId: string,
  config: Record<string, unknown>,
  updatedAt?: Date,
): Promise<void> {
  await trx
    .updateTable('users')
    .set({ config: writeJson(config), ...(updatedAt ? { updated_at: updatedAt.toISOString() } : {}) })
    .where('id', '=', userId)
    .execute();
}
