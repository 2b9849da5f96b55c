import { sql } from 'kysely';
import type { Static } from 'typebox';
import type { SearchContactsBody } from './contract.js';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { containsPattern, countedPage } from '../store/db/rows.js';
import { contactView, type ContactView } from './contact-view.js';

/** `query`: part of the name, e-mail or organisation, case-insensitive; absent lists every contact. */
export type SearchContactsOptions = Static<typeof SearchContactsBody>;

export interface ContactPage {
  total: number;
  from: number;
  size: number;
  results: ContactView[];
}

/**
 * GET /contacts and POST /contacts/search: the caller's own contacts, ordered by name
 * (case-insensitive, the same on both databases), a page at a time.
 */
export async function searchContacts(
  deps: Deps,
  actor: Actor,
  options: SearchContactsOptions,
): Promise<ContactPage> {
  let query = deps.db
    .selectFrom('contacts')
    .where('tenant_id', '=', actor.tenantId)
    .where('owner_id', '=', actor.userId);
  const text = options.query?.trim();
  if (text) {
    const pattern = containsPattern(text);
    query = query.where(
      sql<boolean>`(lower(name) like ${pattern} escape '\\' or lower(coalesce(email, '')) like ${pattern} escape '\\' or lower(coalesce(organisation, '')) like ${pattern} escape '\\')`,
    );
  }
  const { rows, ...page } = await countedPage(
    query,
    (q) =>
      q
        .selectAll()
        .orderBy(sql`lower(name)`)
        .orderBy('id'),
    options,
    20,
  );
  return { ...page, results: rows.map(contactView) };
}
