import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { assertMayUseWebhooks, visibleWebhooks } from './webhook-access.js';
import { webhookView, type WebhookView } from './webhook-view.js';

/**
 * GET /webhooks (spec: Webhooks): global and super administrators list every webhook of the tenant,
 * everyone else the webhooks of their organization. Secrets are never listed.
 */
export async function listWebhooks(
  deps: Deps,
  actor: Actor,
): Promise<{ total: number; results: WebhookView[] }> {
  assertMayUseWebhooks(actor);
  const rows = await visibleWebhooks(deps, actor)
    .selectAll('webhooks')
    .orderBy('webhooks.created_at')
    .orderBy('webhooks.id')
    .execute();
  return { total: rows.length, results: rows.map(webhookView) };
}
