import type { Updateable } from 'kysely';
import type { Static } from 'typebox';
import type { UpdateContactBody } from './contract.js';
import type { Actor } from '../core/access/actor.js';
import { baseVersion, changeRow } from '../core/changes/recorded-rows.js';
import type { Deps } from '../core/deps.js';
import { claimFile, FROM_PHOTO } from '../core/changes/file-usage.js';
import type { ContactTable } from '../store/db/schema.js';
import { loadOwnContact } from './contact-access.js';
import { contactView, type ContactView } from './contact-view.js';
import { writeTransaction } from '../store/db/dialect.js';

/**
 * Fields to change; `null` clears an optional one. `photo`: a new unused POST /files/photo upload
 * (spec Files usage rule 1), the current one, or null.
 */
export type ContactChanges = Omit<Static<typeof UpdateContactBody>, 'id' | '_version'>;

/**
 * PUT /contacts: changes one of the caller's contacts as a compare-and-set on `_version` (409
 * VERSION_MISMATCH on a stale one; without it, the current one). A new photo is claimed for the
 * contact; the previous one stays used (a photo id is used once, spec Files usage rule 1), so
 * sending the current photo again is no change rather than a reuse.
 */
export async function updateContact(
  deps: Deps,
  actor: Actor,
  id: string,
  changes: ContactChanges,
  expectedVersion?: number,
): Promise<ContactView> {
  const contact = await loadOwnContact(deps.db, actor, id);
  const expected = baseVersion(contact, expectedVersion);
  const now = deps.clock.now();
  return writeTransaction(deps.db, deps.dialect, async (trx) => {
    const set: Updateable<ContactTable> = {};
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.email !== undefined) set.email = changes.email;
    if (changes.phone !== undefined) set.phone = changes.phone;
    if (changes.organisation !== undefined) set.organisation = changes.organisation;
    if (changes.photo === null) set.photo = null;
    else if (changes.photo !== undefined && changes.photo !== contact.photo) {
      const photo = { fileId: changes.photo, field: 'photo', kinds: FROM_PHOTO };
      set.photo = (await claimFile(trx, actor, photo, `contact:${contact.id}`, now)).id;
    }
    const row = await changeRow(trx, actor, {
      table: 'contacts',
      id: contact.id,
      expectedVersion: expected,
      set,
      audit: {
        activityType: 'contactEdited',
        objectType: 'contact',
        data: (changed) => ({ version: changed.version, fields: Object.keys(set) }),
      },
      now,
    });
    return contactView(row);
  });
}
