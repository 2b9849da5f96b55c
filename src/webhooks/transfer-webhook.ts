import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import { isAdmin } from '../core/access/roles.js';
import type { Deps } from '../core/deps.js';
import { Forbidden, NotFound, ValidationError } from '../base/errors.js';
import { writeTransaction } from '../store/db/dialect.js';
import { loadVisibleWebhook } from './webhook-access.js';
import { mayHold } from '../core/events/webhook-holders.js';
import { webhookView, type WebhookView } from './webhook-view.js';

/**
 * PUT /webhooks/:webhookId/owner (issue 37, item 7): an administrator of the webhook's scope hands it
 * to a user of the tenant who may hold it (core/events/webhook-holders.ts: active, `use_webhooks`, a role that
 * reaches its scope; 400 otherwise). It delivers again at once if it was paused; the URL and secret do
 * not change (spec: no update of a webhook's configuration).
 */
export async function transferWebhook(
  deps: Deps,
  actor: Actor,
  webhookId: string,
  ownerId: string,
): Promise<WebhookView> {
  const webhook = await loadVisibleWebhook(deps, actor, webhookId);
  if (!isAdmin(actor.role)) throw new Forbidden('Only administrators of its scope transfer a webhook');
  const owner = await deps.db
    .selectFrom('users')
    .select(['id', 'name', 'status', 'role', 'rights', 'organization_id'])
    .where('tenant_id', '=', actor.tenantId)
    .where((eb) => eb.or([eb('id', '=', ownerId), eb('name', '=', ownerId.trim().toLowerCase())]))
    .executeTakeFirst();
  if (!owner) throw new NotFound('No such user');
  if (!mayHold(owner, webhook)) {
    throw new ValidationError(
      `"owner" may not hold this webhook: an active user with the right use_webhooks and ${
        webhook.type === 'tenant' ? 'a global or super administrator role' : 'in its organization'
      }`,
    );
  }
  const now = deps.clock.now();
  const changed = { creator_id: owner.id, creator_name: owner.name, paused_at: null };
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await trx.updateTable('webhooks').set(changed).where('id', '=', webhook.id).execute();
    await recordAction(trx, actor, {
      activityType: 'webhookTransferred',
      objectType: 'webhook',
      objectId: webhook.id,
      data: { from: webhook.creator_id, to: owner.id, wasPaused: webhook.paused_at !== null },
      at: now,
    });
  });
  return webhookView({ ...webhook, ...changed });
}
