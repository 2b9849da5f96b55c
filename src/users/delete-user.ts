import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { Forbidden } from '../core/errors.js';
import { withdrawDeletedUser } from '../core/sharing/withdraw-recipient.js';
import { loadManagedUser } from '../core/access/user-access.js';
import { mayGrantRole, type Role } from '../core/access/roles.js';
import { writeTransaction } from '../store/db/dialect.js';

/**
 * DELETE /users/:id (administrators; spec: User account table): permanent; the account, its
 * sessions, keys, recovery codes and contacts go; the actions they still owed are withdrawn from the
 * documents' workflows. The audit log keeps what the user did, under their name.
 */
export async function deleteUser(deps: Deps, actor: Actor, userId: string): Promise<void> {
  const user = await loadManagedUser(deps, actor, userId);
  if (user.id === actor.userId) throw new Forbidden('You may not delete your own account');
  if (!mayGrantRole(actor.role, user.role as Role))
    throw new Forbidden('You may not manage a user above your role');
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await trx.deleteFrom('auth_tokens').where('user_id', '=', user.id).execute();
    await trx.deleteFrom('recovery_codes').where('user_id', '=', user.id).execute();
    await trx.deleteFrom('activation_tokens').where('user_id', '=', user.id).execute();
    // Contacts are the user's own address book; enums belong to the organization and stay.
    await trx.deleteFrom('contacts').where('owner_id', '=', user.id).execute();
    // Whatever they still owe on shared documents is withdrawn, so no document waits for them.
    await withdrawDeletedUser(trx, deps, { userId: user.id, by: actor, now: deps.clock.now() });
    await trx.deleteFrom('users').where('id', '=', user.id).execute();
    await recordAction(trx, actor, {
      activityType: 'userDeleted',
      objectType: 'user',
      objectId: user.id,
      data: { name: user.name },
      at: deps.clock.now(),
    });
  });
}
