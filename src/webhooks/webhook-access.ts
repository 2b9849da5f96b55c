import type { Selectable, SelectQueryBuilder } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { Forbidden, NotFound } from '../base/errors.js';
import type { Database, WebhookTable } from '../store/db/schema.js';
import { isAdmin, isTenantWide } from '../core/access/roles.js';

/**
 * Who reaches which webhooks (spec: Webhooks, rules; Contract: Identity and rights; issue 20, item 11):
 * - every webhook call needs the right `use_webhooks` (403 FORBIDDEN without it);
 * - global and super administrators reach every webhook of their tenant;
 * - organization administrators reach the organization webhooks of their own organization;
 * - anyone else holding the right (a plain user an administrator granted it to) reaches only the
 *   webhooks they created: a colleague's webhook, its secret-signed deliveries and its retries are
 *   not theirs to list, read, retry or delete.
 * Whoever reaches a webhook may also delete it (there is no update), so a webhook one may not change
 * is one one may not see: 404, never 403, and its existence does not leak.
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
  if (isAdmin(actor.role))
    return query
      .where('webhooks.type', '=', 'organization')
      .where('webhooks.organization_id', '=', actor.organizationId);
  return query.where('webhooks.creator_id', '=', actor.userId);
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
