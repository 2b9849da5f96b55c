import type { Kysely } from 'kysely';
import type { Actor } from './actor.js';
import { ValidationError } from '../errors.js';
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
    const wanted = audience.users;
    const rows =
      wanted.length === 0
        ? []
        : await db
            .selectFrom('users')
            .select(['id', 'name'])
            .where('tenant_id', '=', actor.tenantId)
            .where((eb) => eb.or([eb('id', 'in', wanted), eb('name', 'in', wanted)]))
            .execute();
    const ids = wanted.map((wantedUser, i) => {
      const found = rows.find((r) => r.id === wantedUser) ?? rows.find((r) => r.name === wantedUser);
      if (!found) throw new ValidationError(`${paths.users}[${i}]`, 'must name a user');
      return found.id;
    });
    result.users = [...new Set(ids)];
  }
  if (audience.groups !== undefined) {
    const wanted = audience.groups;
    const rows =
      wanted.length === 0
        ? []
        : await db
            .selectFrom('organizations')
            .select('id')
            .where('tenant_id', '=', actor.tenantId)
            .where('id', 'in', wanted)
            .execute();
    wanted.forEach((group, i) => {
      if (!rows.some((r) => r.id === group))
        throw new ValidationError(`${paths.groups}[${i}]`, 'must name a group');
    });
    result.groups = [...new Set(wanted)];
  }
  return result;
}
