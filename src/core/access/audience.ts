import type { Kysely } from 'kysely';
import type { Actor } from './actor.js';
import { ValidationError } from '../../base/errors.js';
import type { Database } from '../../store/db/schema.js';

/** Who a record names: users and groups (organizations), as the request gives them. */
export interface AudienceInput {
  users?: string[] | undefined;
  groups?: string[] | undefined;
}

/**
 * The users and groups a record names (a template's `__users` and `__groups`, a definition's
 * `usableBy`), as stored ids: users by id or login name, groups by organization id, all of the
 * caller's tenant (400 naming the first unknown one, under `paths`).
 */
export async function resolveAudience(
  db: Kysely<Database>,
  actor: Actor,
  audience: AudienceInput,
  paths: { users: string; groups: string },
): Promise<{ users?: string[]; groups?: string[] }> {
  const result: { users?: string[]; groups?: string[] } = {};
  if (audience.users !== undefined) {
    result.users = await resolveEach(audience.users, paths.users, 'must name a user', (wanted) =>
      db
        .selectFrom('users')
        .select(['id', 'name'])
        .where('tenant_id', '=', actor.tenantId)
        .where((eb) => eb.or([eb('id', 'in', wanted), eb('name', 'in', wanted)]))
        .execute(),
    );
  }
  if (audience.groups !== undefined) {
    result.groups = await resolveEach(audience.groups, paths.groups, 'must name a group', (wanted) =>
      db
        .selectFrom('organizations')
        .select('id')
        .where('tenant_id', '=', actor.tenantId)
        .where('id', 'in', wanted)
        .execute(),
    );
  }
  return result;
}

/**
 * The id of each name `wanted` gives, found among the rows `lookup` reads for them by id, else by
 * login name; each id once. An unknown one is 400 under `path`, the first one named.
 */
async function resolveEach(
  wanted: string[],
  path: string,
  problem: string,
  lookup: (wanted: string[]) => Promise<{ id: string; name?: string }[]>,
): Promise<string[]> {
  const rows = wanted.length === 0 ? [] : await lookup(wanted);
  const ids = wanted.map((name, i) => {
    const found = rows.find((r) => r.id === name) ?? rows.find((r) => r.name === name);
    if (!found) throw new ValidationError(`${path}[${i}]`, problem);
    return found.id;
  });
  return [...new Set(ids)];
}
