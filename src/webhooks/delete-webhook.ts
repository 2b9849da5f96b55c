import type { Actor } from '../core/access/actor.js';
import { deleteRow } from '../core/changes/recorded-rows.js';
import type { Deps } from '../core/deps.js';
import { deleteLane } from '../jobs/queue.js';
import { webhookLane } from '../core/events/delivery-job.js';
import { loadVisibleWebhook } from './webhook-access.js';

/**
 * DELETE /webhooks/:webhookId (spec: Webhooks; no update: delete and recreate). The webhook goes with
 * its pending deliveries and their history; nothing more is sent to it. A delivery in flight at that
 * moment may still arrive once.
 */
export async function deleteWebhook(deps: Deps, actor: Actor, webhookId: string): Promise<void> {
  const webhook = await loadVisibleWebhook(deps, actor, webhookId);
  await deleteRow(deps, actor, {
    from: 'webhooks',
    id: webhook.id,
    audit: {
      activityType: 'webhookDeleted',
      objectType: 'webhook',
      data: { type: webhook.type, name: webhook.name },
    },
    dependents: async (trx) => {
      await deleteLane(trx, webhookLane(webhook.id));
      await trx
        .deleteFrom('webhook_attempts')
        .where('delivery_id', 'in', (eb) =>
          eb.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', webhook.id),
        )
        .execute();
      await trx.deleteFrom('webhook_deliveries').where('webhook_id', '=', webhook.id).execute();
    },
  });
}
