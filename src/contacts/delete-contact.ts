import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { loadOwnContact } from './contact-access.js';
import { writeTransaction } from '../store/db/dialect.js';

/**
 * DELETE /contacts/:id: removes one of the caller's contacts. Its photo stays used: a photo id is
 * used once (spec Files usage rule 1), even after its record is gone.
 */
export async function deleteContact(deps: Deps, actor: Actor, id: string): Promise<void> {
  const contact = await loadOwnContact(deps.db, actor, id);
  const now = deps.clock.now();
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await trx.deleteFrom('contacts').where('id', '=', contact.id).execute();
    await recordAction(trx, actor, {
      activityType: 'contactDeleted',
      objectType: 'contact',
      objectId: contact.id,
      data: { name: contact.name },
      at: now,
    });
  });
}
