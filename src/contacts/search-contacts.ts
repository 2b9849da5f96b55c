import { sql } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { contactView, type ContactView } from './contact-view.js';

export interface SearchContactsOptions {
  /** Part of the name, e-mail or organisation, case-insensitive; absent lists every contact. */
  query?: string | undefined;
  from?: number | undefined;
  size?: number | undefined;
}

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
  const from = options.from ?? 0;
  const size = options.size ?? 20;
  let query = deps.db
    .selectFrom('contacts')
    .where('tenant_id', '=', actor.tenantId)
    .where('owner_id', '=', actor.userId);
  const text = options.query?.trim();
  if (text) {
    // LIKE wildcards in the query are matched literally; the escape character is declared for SQLite.
    const pattern = `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where(
      sql<boolean>`(lower(name) like ${pattern} escape '\\' or lower(coalesce(email, '')) like ${pattern} escape '\\' or lower(coalesce(organisation, '')) like ${pattern} escape '\\')`,
    );
  }
  const [count, rows] = await Promise.all([
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    query
      .selectAll()
      .orderBy(sql`lower(name)`)
      .orderBy('id')
      .offset(from)
      .limit(size)
      .execute(),
  ]);
  return { total: Number(count.n), from, size, results: rows.map(contactView) };
}
