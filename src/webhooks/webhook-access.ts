import type { Selectable, SelectQueryBuilder } from 'kysely';
import type { Actor } from '../auth/actor.js';
import type { Deps } from '../deps.js';
import { Forbidden, NotFound } from '../errors.js';
import type { Database, WebhookTable } from '../store/db/schema.js';
import { isTenantWide } from '../users/roles.js';

/**
 * Who sees which webhooks (spec: Webhooks, rules; Contract: Identity and rights):
 * - every webhook call needs the right `use_webhooks` (403 FORBIDDEN without it);
 * - global and super administrators see every webhook of their tenant;
 * - everyone else holding the right — organization administrators, and plain users an administrator
 *   granted it to — sees the organization webhooks of their own organization only. A plain user is
 *   treated like an organization administrator: the right is the administrator's decision, and an
 *   organization webhook receives that organization's events whoever created it.
 */
export function assertMayUseWebhooks(actor: Actor): void {
  if (!actor.rights.has('use_webhooks')) throw new Forbidden('The right use_webhooks is needed');
}

/** The webhooks `actor` may see, as a query to refine. */
export function visibleWebhooks(
  deps: Deps,
  actor: Actor,
): SelectQueryBuilder<Database, 'webhooks', Record<never, never>> {
  const query = deps.db.selectFrom('webhooks').where('webhooks.tenant_id', '=', actor.tenantId);
  if (isTenantWide(actor.role)) return query;
  return query
    .where('webhooks.type', '=', 'organization')
    .where('webhooks.organization_id', '=', actor.organizationId);
}

/** Loads a webhook the caller may see; any other id is "not found", so existence never leaks. */
export async function loadVisibleWebhook(
  deps: Deps,
  actor: Actor,
  webhookId: string,
): Promise<Selectable<WebhookTable>> {
  assertMayUseWebhooks(actor);
  const webhook = await visibleWebhooks(deps, actor)
    .selectAll('webhooks')
    .where('webhooks.id', '=', webhookId)
    .executeTakeFirst();
  if (!webhook) throw new NotFound('No such webhook');
  return webhook;
}
