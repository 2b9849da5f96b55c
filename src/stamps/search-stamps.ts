import { sql } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { isAdmin, isTenantWide } from '../core/access/roles.js';
import type { StampScope } from '../core/stamps/stamp-access.js';
import { containsPattern, countedPage } from '../store/db/rows.js';
import { stampViews, type StampView } from './stamp-view.js';

export interface SearchStampsOptions {
  /** Part of the name, case-insensitive. */
  query?: string | undefined;
  scope?: StampScope | undefined;
  from?: number | undefined;
  size?: number | undefined;
}

export interface StampSearchResult {
  total: number;
  from: number;
  results: StampView[];
}

/**
 * POST /stamps/search: the stamps the caller may see (stamp-access.ts says who), by name. Share
 * stamps belong to their share and are not listed here.
 */
export async function searchStamps(
  deps: Deps,
  actor: Actor,
  options: SearchStampsOptions,
): Promise<StampSearchResult> {
  const allOrganizations = isAdmin(actor.role) && isTenantWide(actor.role);
  let query = deps.db
    .selectFrom('stamps')
    .where('tenant_id', '=', actor.tenantId)
    .where((eb) =>
      eb.or([
        eb.and([eb('scope', '=', 'personal'), eb('owner_id', '=', actor.userId)]),
        allOrganizations
          ? eb('scope', '=', 'organization')
          : eb.and([eb('scope', '=', 'organization'), eb('organization_id', '=', actor.organizationId)]),
      ]),
    );
  if (options.scope) query = query.where('scope', '=', options.scope);
  if (options.query) {
    query = query.where(sql<boolean>`lower(name) like ${containsPattern(options.query)} escape '\\'`);
  }
  const page = await countedPage(query, (q) => q.selectAll().orderBy('name').orderBy('id'), options, 20);
  return { total: page.total, from: page.from, results: await stampViews(deps.db, page.rows) };
}
