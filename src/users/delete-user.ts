import type { Actor } from '../core/access/actor.js';
import { deleteRow } from '../core/changes/recorded-rows.js';
import type { Deps } from '../core/deps.js';
import { Forbidden } from '../base/errors.js';
import { withdrawDeletedUser } from '../core/sharing/withdraw-recipient.js';
import { reconcileHeldWebhooks } from '../core/events/webhook-holders.js';
import { loadManagedUser } from '../core/access/user-access.js';
import { mayGrantRole, type Role } from '../core/access/roles.js';

/**
 * DELETE /users/:id (administrators; spec: User account table): permanent; the account, its
 * sessions, keys, recovery codes and contacts go; the actions they still owed are withdrawn from the
 * documents' workflows; the webhooks they held pause (core/events/webhook-holders.ts). The audit log keeps what
 * the user did, under their name.
 */
export async function deleteUser(deps: Deps, actor: Actor, userId: string): Promise<void> {
  const user = await loadManagedUser(deps, actor, userId);
  if (user.id === actor.userId) throw new Forbidden('You may not delete your own account');
  if (!mayGrantRole(actor.role, user.role as Role))
    throw new Forbidden('You may not manage a user above your role');
  await deleteRow(deps, actor, {
    from: 'users',
    id: user.id,
    audit: { activityType: 'userDeleted', objectType: 'user', data: { name: user.name } },
    dependents: async (trx, now) => {
      await trx.deleteFrom('auth_tokens').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('recovery_codes').where('user_id', '=', user.id).execute();
      await trx.deleteFrom('activation_tokens').where('user_id', '=', user.id).execute();
      // Contacts are the user's own address book; enums belong to the organization and stay.
      await trx.deleteFrom('contacts').where('owner_id', '=', user.id).execute();
      // Whatever they still owe on shared documents is withdrawn, so no document waits for them.
      await withdrawDeletedUser(trx, deps, { userId: user.id, by: actor, now });
      // The webhooks they held stop delivering until an administrator transfers them.
      await reconcileHeldWebhooks(trx, {
        tenantId: actor.tenantId,
        userId: user.id,
        by: actor,
        now,
        deleted: true,
      });
    },
  });
}
