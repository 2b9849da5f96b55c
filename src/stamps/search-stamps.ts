import { sql } from 'kysely';
import type { Static } from 'typebox';
import type { SearchStampsBody } from './contract.js';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { isAdmin, isTenantWide } from '../core/access/roles.js';
import { containsPattern, countedPage } from '../store/db/rows.js';
import { stampViews, type StampView } from './stamp-view.js';

/** `query`: part of the name, case-insensitive. */
export type SearchStampsOptions = Static<typeof SearchStampsBody>;

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
