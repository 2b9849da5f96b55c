import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { NotFound } from '../base/errors.js';
import { loadManagedUser } from '../core/access/user-access.js';
import { listCertificates } from '../core/identity/user-certificates.js';
import { userView, type UserView } from '../core/identity/user-view.js';

/** GET /users/:id: a user reads themselves; administrators read the users they manage. */
export async function getUser(deps: Deps, actor: Actor, userId: string): Promise<UserView> {
  if (userId === actor.userId || userId === 'me') {
    const self = await deps.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', actor.userId)
      .executeTakeFirst();
    if (!self) throw new NotFound('No such user');
    return userView(self, await listCertificates(deps, self.id));
  }
  try {
    const user = await loadManagedUser(deps, actor, userId);
    return userView(user, await listCertificates(deps, user.id));
  } catch (error) {
    // A non-administrator asking for someone else learns nothing, not even that the call needs a role.
    if (error instanceof Error && error.name === 'Forbidden') throw new NotFound('No such user');
    throw error;
  }
}
