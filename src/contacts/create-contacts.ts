import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import type { NewContact as NewContactSchema } from './contract.js';
import type { Actor } from '../core/access/actor.js';
import { insertVersionedRow } from '../core/changes/recorded-rows.js';
import type { Deps } from '../core/deps.js';
import { LimitExceeded } from '../base/errors.js';
import { claimFile, FROM_PHOTO } from '../core/changes/file-usage.js';
import { contactView, type ContactRow, type ContactView } from './contact-view.js';
import { writeTransaction } from '../store/db/dialect.js';

/** `photo`: an unused POST /files/photo upload of the caller (spec Files usage rule 1). */
export type NewContact = Static<typeof NewContactSchema>;

/** Contract: bulk calls take at most 100 records. */
export const CONTACTS_BULK_LIMIT = 100;

/**
 * POST /contacts: one contact or up to 100, all or none, owned by the caller. Each photo is claimed
 * for its contact in the same transaction as the records (spec Files usage rule 1: a photo id is used
 * once), so a reused id or one from another upload endpoint fails the whole request. Errors name
 * the field as the request spelled it: `photo` for one object, `[2].photo` in an array (`bulk`).
 */
export async function createContacts(
  deps: Deps,
  actor: Actor,
  contacts: NewContact[],
  options: { bulk: boolean },
): Promise<ContactView[]> {
  if (contacts.length > CONTACTS_BULK_LIMIT) {
    throw new LimitExceeded(`At most ${CONTACTS_BULK_LIMIT} contacts per request`);
  }
  const now = deps.clock.now();
  return writeTransaction(deps.db, deps.dialect, async (trx) => {
    const rows: ContactRow[] = [];
    for (const [i, contact] of contacts.entries()) {
      const id = randomUUID();
      const field = options.bulk ? `[${i}].photo` : 'photo';
      let photo: string | null = null;
      if (contact.photo !== undefined) {
        const use = { fileId: contact.photo, field, kinds: FROM_PHOTO };
        photo = (await claimFile(trx, actor, use, `contact:${id}`, now)).id;
      }
      const values = {
        id,
        owner_id: actor.userId,
        name: contact.name,
        email: contact.email ?? null,
        phone: contact.phone ?? null,
        organisation: contact.organisation ?? null,
        photo,
      };
      const data = { name: contact.name, ...(photo ? { photo } : {}) };
      const audit = { activityType: 'contactCreated', objectType: 'contact', data };
      const row = await insertVersionedRow(trx, actor, 'contacts', values, audit, now);
      rows.push(row);
    }
    return rows.map(contactView);
  });
}
