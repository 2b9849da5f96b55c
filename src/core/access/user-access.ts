import type { Selectable } from 'kysely';
import type { Actor } from './actor.js';
import type { Deps } from '../deps.js';
import { Forbidden, NotFound } from '../../base/errors.js';
import { findInTenant } from '../../store/db/rows.js';
import type { UserTable } from '../../store/db/schema.js';
import { isAdmin, isTenantWide } from './roles.js';

/** Administrator-only calls by anyone else: 403 (Contract: FORBIDDEN, role missing). */
export function assertAdmin(actor: Actor): void {
  if (!isAdmin(actor.role)) throw new Forbidden('Only administrators may do this');
}

export function assertRole(actor: Actor, roles: readonly string[], what: string): void {
  if (!roles.includes(actor.role)) throw new Forbidden(`Only ${what} may do this`);
}

/**
 * Loads a user an administrator may manage. Users of other tenants, and for an organization
 * administrator users of other organizations, are "not found": their existence is not revealed.
 */
export async function loadManagedUser(
  deps: Deps,
  actor: Actor,
  userId: string,
): Promise<Selectable<UserTable>> {
  assertAdmin(actor);
  const user = await findInTenant(deps.db, 'users', actor.tenantId, userId);
  if (!user) throw new NotFound('No such user');
  if (!isTenantWide(actor.role) && user.organization_id !== actor.organizationId)
    throw new NotFound('No such user');
  return user;
}
