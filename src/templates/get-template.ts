import type { Actor } from '../auth/actor.js';
import type { Deps } from '../deps.js';
import { NotFound } from '../errors.js';
import { isTenantWide } from '../users/roles.js';
import { templateView } from './template-view.js';

/** GET /templates/:templateId: templates are visible within their organization (and to tenant administrators). */
export async function getTemplate(deps: Deps, actor: Actor, id: string): Promise<Record<string, unknown>> {
  const row = await deps.db
    .selectFrom('templates')
    .leftJoin('users', 'users.id', 'templates.owner_id')
    .selectAll('templates')
    .select('users.name as owner_name')
    .where('templates.id', '=', id)
    .where('templates.tenant_id', '=', actor.tenantId)
    .executeTakeFirst();
  if (!row || (row.organization_id !== actor.organizationId && !isTenantWide(actor.role))) {
    throw new NotFound('No such template');
  }
  return templateView(row, row.owner_name ?? row.owner_id);
}
