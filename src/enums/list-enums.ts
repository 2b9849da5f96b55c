import { sql } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { enumViews, type EnumView } from './enum-view.js';

export interface EnumPage {
  total: number;
  from: number;
  size: number;
  results: EnumView[];
}

/** GET /enums: the enums of the caller's organization, by name (case-insensitive), a page at a time. */
export async function listEnums(
  deps: Deps,
  actor: Actor,
  options: { from?: number | undefined; size?: number | undefined },
): Promise<EnumPage> {
  const from = options.from ?? 0;
  const size = options.size ?? 20;
  const query = deps.db
    .selectFrom('enums')
    .where('tenant_id', '=', actor.tenantId)
    .where('organization_id', '=', actor.organizationId);
  const [count, rows] = await Promise.all([
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    query
      .selectAll()
      .orderBy(sql`lower(name)`)
      .orderBy('name')
      .offset(from)
      .limit(size)
      .execute(),
  ]);
  return { total: Number(count.n), from, size, results: await enumViews(deps.db, rows) };
}
