import type { Kysely, Selectable } from 'kysely';
import type { Actor } from '../access/actor.js';
import { Forbidden, NotFound } from '../../base/errors.js';
import { findInTenant } from '../../store/db/rows.js';
import type { Database, StampTable } from '../../store/db/schema.js';
import { isAdmin, isTenantWide } from '../access/roles.js';

export type StampRow = Selectable<StampTable>;

/** The scopes POST /stamps creates; `share` stamps come only from POST /share/upload/stamp. */
export const STAMP_SCOPES = ['personal', 'organization'] as const;
export type StampScope = (typeof STAMP_SCOPES)[number];

/**
 * Who manages an organization's stamps: its administrators, and global or super administrators
 * for every organization of the tenant (spec Stamp: organization stamps).
 */
export function administersOrganization(actor: Actor, organizationId: string): boolean {
  return isAdmin(actor.role) && (isTenantWide(actor.role) || organizationId === actor.organizationId);
}

/**
 * Who may use a stamp when signing (spec Stamp: team stamps are "usable by authorized users"):
 * a personal stamp its owner; an organization stamp the members of that organization. Share stamps
 * are used by their share only (see load-usable-stamp.ts).
 */
export function mayUseStamp(actor: Actor, stamp: StampRow): boolean {
  if (stamp.tenant_id !== actor.tenantId) return false;
  if (stamp.scope === 'personal') return stamp.owner_id === actor.userId;
  if (stamp.scope === 'organization') return stamp.organization_id === actor.organizationId;
  return false;
}

/** Who may change or delete a stamp: the owner of a personal stamp, the administrators of an organization stamp. */
export function mayManageStamp(actor: Actor, stamp: StampRow): boolean {
  if (stamp.tenant_id !== actor.tenantId) return false;
  if (stamp.scope === 'personal') return stamp.owner_id === actor.userId;
  if (stamp.scope === 'organization') return administersOrganization(actor, stamp.organization_id);
  return false;
}

/** Who may read a stamp record: whoever may use or manage it. */
export function maySeeStamp(actor: Actor, stamp: StampRow): boolean {
  return mayUseStamp(actor, stamp) || mayManageStamp(actor, stamp);
}

/**
 * A stamp the caller may see. Anything else, another user's personal stamp or another
 * organization's stamp included, is "not found" (Contract: never leak existence).
 */
export async function loadVisibleStamp(db: Kysely<Database>, actor: Actor, id: string): Promise<StampRow> {
  const stamp = await findInTenant(db, 'stamps', actor.tenantId, id);
  if (!stamp || !maySeeStamp(actor, stamp)) throw new NotFound('No such stamp');
  return stamp;
}

/** A stamp the caller may change: unseen is 404, seen but not theirs to change (a member of its organization) 403. */
export async function loadManageableStamp(db: Kysely<Database>, actor: Actor, id: string): Promise<StampRow> {
  const stamp = await loadVisibleStamp(db, actor, id);
  if (!mayManageStamp(actor, stamp))
    throw new Forbidden('Only administrators of its organization may change an organization stamp');
  return stamp;
}
