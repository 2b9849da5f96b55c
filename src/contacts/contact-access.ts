import type { Kysely } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import { NotFound } from '../base/errors.js';
import { findInTenant } from '../store/db/rows.js';
import type { Database } from '../store/db/schema.js';
import type { ContactRow } from './contact-view.js';

/**
 * One of the caller's contacts. A contact belongs to the user who created it: anyone else's, an
 * administrator's included, is "not found" (Contract: never leak existence).
 */
export async function loadOwnContact(db: Kysely<Database>, actor: Actor, id: string): Promise<ContactRow> {
  const contact = await findInTenant(db, 'contacts', actor.tenantId, id);
  if (!contact || contact.owner_id !== actor.userId) throw new NotFound('No such contact');
  return contact;
}
