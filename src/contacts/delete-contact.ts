import type { Actor } from '../core/access/actor.js';
import { deleteRow } from '../core/changes/recorded-rows.js';
import type { Deps } from '../core/deps.js';
import { loadOwnContact } from './contact-access.js';

/**
 * DELETE /contacts/:id: removes one of the caller's contacts. Its photo stays used: a photo id is
 * used once (spec Files usage rule 1), even after its record is gone.
 */
export async function deleteContact(deps: Deps, actor: Actor, id: string): Promise<void> {
  const contact = await loadOwnContact(deps.db, actor, id);
  const audit = { activityType: 'contactDeleted', objectType: 'contact', data: { name: contact.name } };
  await deleteRow(deps, actor, { from: 'contacts', id: contact.id, audit });
}
