import { sql } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { countedPage, type PageRequest } from '../store/db/rows.js';
import { enumViews, type EnumView } from './enum-view.js';

export interface EnumPage {
  total: number;
  from: number;
  size: number;
  results: EnumView[];
}

/** GET /enums: the enums of the caller's organization, by name (case-insensitive), a page at a time. */
export async function listEnums(deps: Deps, actor: Actor, options: PageRequest): Promise<EnumPage> {
  const { rows, ...page } = await countedPage(
    deps.db
      .selectFrom('enums')
      .where('tenant_id', '=', actor.tenantId)
      .where('organization_id', '=', actor.organizationId),
    (q) =>
      q
        .selectAll()
        .orderBy(sql`lower(name)`)
        .orderBy('name'),
    options,
    20,
  );
  return { ...page, results: await enumViews(deps.db, rows) };
}
