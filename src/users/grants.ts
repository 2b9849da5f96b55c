import type { Actor } from '../core/access/actor.js';
import { Forbidden } from '../base/errors.js';
import { writeJson } from '../store/db/json.js';
import {
  DEFAULT_RIGHTS,
  effectiveRights,
  mayGrantRole,
  type Right,
  type Role,
} from '../core/access/roles.js';

/**
 * What an administrator may give a user they create or change (Contract: Identity and rights): no
 * role above their own, no right they do not hold themselves. Anything more is 403.
 */
export function assertMayGrant(actor: Actor, role: Role, rights: Right[] | undefined): void {
  if (!mayGrantRole(actor.role, role)) throw new Forbidden(`You may not grant the role ${role}`);
  const beyond = (rights ?? []).filter((r) => !actor.rights.has(r));
  if (beyond.length > 0)
    throw new Forbidden(`You may not grant rights you do not hold: ${beyond.join(', ')}`);
}

/** The stored `rights` of a user with `role`: the rights given, else the role's defaults. */
export function storedRights(role: Role, rights: Right[] | undefined): string {
  return writeJson(effectiveRights(role, rights ?? DEFAULT_RIGHTS[role]));
}
