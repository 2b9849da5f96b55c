import type { Static } from 'typebox';
import type { UpdateUserBody } from './contract.js';
import type { Actor } from '../core/access/actor.js';
import { hashPassword } from '../core/identity/secrets.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { Forbidden } from '../base/errors.js';
import { claimFile, FROM_PHOTO } from '../core/changes/file-usage.js';
import type { UserTable } from '../store/db/schema.js';
import type { Updateable } from 'kysely';
import { loadManagedUser } from '../core/access/user-access.js';
import { resolveOrganization } from './organizations.js';
import { mayGrantRole, type Role } from '../core/access/roles.js';
import { assertMayGrant, storedRights } from './grants.js';
import { writeTransaction } from '../store/db/dialect.js';
import { reconcileHeldWebhooks } from '../core/events/webhook-holders.js';

/**
 * The body of PUT /users/:id; `photo` is a new unused POST /files/photo upload of the caller (spec Files
 * usage rule 1), the current one, or null.
 */
export type UserChanges = Static<typeof UpdateUserBody>;

/**
 * PUT /users/:id (administrators; spec: User account table). Suspension takes effect at once: every
 * request reads the account's status, so its sessions and API keys stop working with this commit.
 * A new password also ends the user's sessions (API keys stay: they are the integrations' own).
 */
export async function updateUser(
  deps: Deps,
  actor: Actor,
  userId: string,
  changes: UserChanges,
): Promise<void> {
  const user = await loadManagedUser(deps, actor, userId);
  if (user.id === actor.userId && (changes.status !== undefined || changes.role !== undefined)) {
    throw new Forbidden('You may not change your own status or role');
  }
  if (!mayGrantRole(actor.role, user.role as Role))
    throw new Forbidden('You may not manage a user above your role');
  const role = changes.role ?? (user.role as Role);
  assertMayGrant(actor, role, changes.rights);

  const passwordHash = changes.password ? await hashPassword(changes.password) : undefined;
  const now = deps.clock.now();
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const set: Updateable<UserTable> = { updated_at: now.toISOString() };
    if (changes.status !== undefined) set.status = changes.status;
    if (changes.displayName !== undefined) set.display_name = changes.displayName;
    if (changes.email !== undefined) set.email = changes.email?.toLowerCase() ?? null;
    if (passwordHash !== undefined) set.password_hash = passwordHash;
    if (changes.photo === null) set.photo = null;
    else if (changes.photo !== undefined && changes.photo !== user.photo) {
      // The previous photo stays used: a photo id is used once. The current one sent again is no change.
      const photo = { fileId: changes.photo, field: 'photo', kinds: FROM_PHOTO };
      set.photo = (await claimFile(trx, actor, photo, `user:${user.id}`, now)).id;
    }
    if (changes.role !== undefined || changes.rights !== undefined) {
      set.role = role;
      set.rights = storedRights(role, changes.rights);
    }
    if (changes.organization !== undefined) {
      set.organization_id = await resolveOrganization(trx, actor, changes.organization, now);
    }
    await trx.updateTable('users').set(set).where('id', '=', user.id).execute();
    if (set.status !== undefined || set.role !== undefined || set.organization_id !== undefined) {
      // A webhook delivers only while its holder may hold it (core/events/webhook-holders.ts).
      await reconcileHeldWebhooks(trx, { tenantId: actor.tenantId, userId: user.id, by: actor, now });
    }
    if (passwordHash !== undefined) {
      await trx
        .deleteFrom('auth_tokens')
        .where('user_id', '=', user.id)
        .where('kind', '=', 'session')
        .execute();
    }
    const activityType =
      changes.status === 'suspended'
        ? 'userSuspended'
        : changes.status === 'active'
          ? 'userActivated'
          : 'userUpdated';
    await recordAction(trx, actor, {
      activityType,
      objectType: 'user',
      objectId: user.id,
      data: { fields: Object.keys(changes).filter((k) => k !== 'password') },
      at: now,
    });
  });
}
