import type { Static } from 'typebox';
import type { GroupSearchBody } from './contract.js';
import { sql } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { LITE_ROLES, isTenantWide } from '../core/access/roles.js';

/** The body of POST /groups/search. */
export type GroupSearch = NonNullable<Static<typeof GroupSearchBody>>;

export interface Group {
  id: string;
  name: string;
  type: 'organization';
  createDate: string;
  userCount?: number;
  liteUserCount?: number;
}

/**
 * POST /groups/search. A group is an organization of the tenant. With `includeUserCount`,
 * `userCount` counts administrators and members and `liteUserCount` the read, prepare and sign
 * roles (spec: User). Global and super administrators see every group; others their own.
 */
export async function searchGroups(
  deps: Deps,
  actor: Actor,
  search: GroupSearch,
): Promise<{ total: number; from: number; results: Group[] }> {
  let query = deps.db.selectFrom('organizations').where('organizations.tenant_id', '=', actor.tenantId);
  if (!isTenantWide(actor.role)) query = query.where('organizations.id', '=', actor.organizationId);
  if (search.query)
    query = query.where(
      sql`lower(organizations.name)`,
      'like',
      `%${escapeLike(search.query.toLowerCase())}%`,
    );
  const from = search.from ?? 0;
  const [total, rows] = await Promise.all([
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    query
      .selectAll('organizations')
      .orderBy('organizations.name')
      .orderBy('organizations.id')
      .limit(search.size ?? 50)
      .offset(from)
      .execute(),
  ]);
  const counts = new Map<string, { members: number; lite: number }>();
  if (search.includeUserCount && rows.length > 0) {
    const byRole = await deps.db
      .selectFrom('users')
      .select(['organization_id', 'role', (eb) => eb.fn.countAll<number>().as('n')])
      .where(
        'organization_id',
        'in',
        rows.map((r) => r.id),
      )
      .groupBy(['organization_id', 'role'])
      .execute();
    for (const row of byRole) {
      const entry = counts.get(row.organization_id) ?? { members: 0, lite: 0 };
      if ((LITE_ROLES as readonly string[]).includes(row.role)) entry.lite += Number(row.n);
      else entry.members += Number(row.n);
      counts.set(row.organization_id, entry);
    }
  }
  return {
    total: Number(total.n),
    from,
    results: rows.map((r) => ({
      id: r.id,
      name: r.name,
      type: 'organization' as const,
      createDate: r.created_at,
      ...(search.includeUserCount
        ? { userCount: counts.get(r.id)?.members ?? 0, liteUserCount: counts.get(r.id)?.lite ?? 0 }
        : {}),
    })),
  };
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
