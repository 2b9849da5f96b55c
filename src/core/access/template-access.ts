import type { Kysely, Selectable } from 'kysely';
import type { Actor } from './actor.js';
import { Forbidden, NotFound } from '../../base/errors.js';
import { readJson } from '../../store/db/json.js';
import { findInTenant } from '../../store/db/rows.js';
import type { Database, TemplateTable } from '../../store/db/schema.js';
import { isAdmin, isTenantWide } from './roles.js';

export type TemplateRow = Selectable<TemplateTable>;

function administers(actor: Actor, template: TemplateRow): boolean {
  return (
    isAdmin(actor.role) && (isTenantWide(actor.role) || template.organization_id === actor.organizationId)
  );
}

/**
 * Who may see a template (spec Template: stored records carry `__owner`, `__users`, `__groups`): its
 * owner, the users named in `__users`, the members of the groups named in `__groups` (a group is an
 * organization, see POST /groups/search), and the administrators of its organization (global and
 * super administrators: of the tenant). Being in the same organization is not enough.
 */
export function canSeeTemplate(actor: Actor, template: TemplateRow): boolean {
  if (template.tenant_id !== actor.tenantId) return false;
  return (
    template.owner_id === actor.userId ||
    readJson<string[]>(template.users, []).includes(actor.userId) ||
    readJson<string[]>(template.groups, []).includes(actor.organizationId) ||
    administers(actor, template)
  );
}

/** Who may change or delete a template: its owner and the administrators of its organization. */
export function canChangeTemplate(actor: Actor, template: TemplateRow): boolean {
  return (
    template.tenant_id === actor.tenantId &&
    (template.owner_id === actor.userId || administers(actor, template))
  );
}

/** A template the caller may see; any other id is "not found" (never leak existence). */
export async function loadVisibleTemplate(
  db: Kysely<Database>,
  actor: Actor,
  id: string,
): Promise<TemplateRow> {
  const row = await findInTenant(db, 'templates', actor.tenantId, id);
  if (!row || !canSeeTemplate(actor, row)) throw new NotFound(`No such template: ${id}`);
  return row;
}

/** A template the caller may change: unseen is 404, seen but not theirs to change is 403. */
export async function loadChangeableTemplate(
  db: Kysely<Database>,
  actor: Actor,
  id: string,
): Promise<TemplateRow> {
  const row = await loadVisibleTemplate(db, actor, id);
  if (!canChangeTemplate(actor, row))
    throw new Forbidden('Only the owner or an administrator may change this template');
  return row;
}
