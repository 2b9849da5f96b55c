import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { NotFound } from '../base/errors.js';
import { runNow } from '../jobs/queue.js';
import { writeTransaction } from '../store/db/dialect.js';
import { requeueDelivery } from '../core/events/delivery-job.js';
import { loadVisibleWebhook } from './webhook-access.js';

/**
 * POST /webhooks/:webhookId/deliveries/:deliveryId/retry: sends a delivery again, with the same
 * delivery id (receivers deduplicate on it).
 * - delivered or failed: queued anew, behind the webhook's deliveries already waiting (their order
 *   stays as it was), with a fresh 24 hours of retries;
 * - waiting for its next retry: tried now;
 * - pending, waiting its turn or under way: already on its way, nothing changes.
 */
export async function retryDelivery(
  deps: Deps,
  actor: Actor,
  webhookId: string,
  deliveryId: string,
): Promise<void> {
  const webhook = await loadVisibleWebhook(deps, actor, webhookId);
  const now = deps.clock.now();
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const delivery = await trx
      .selectFrom('webhook_deliveries as d')
      .leftJoin('jobs as j', 'j.id', 'd.job_id')
      .select(['d.id', 'd.job_id', 'j.status as job_status'])
      .where('d.id', '=', deliveryId)
      .where('d.webhook_id', '=', webhook.id)
      .executeTakeFirst();
    if (!delivery) throw new NotFound('No such delivery');
    let action: 'requeued' | 'runNow' | 'none' = 'none';
    if (delivery.job_status === null || delivery.job_status === 'done' || delivery.job_status === 'dead') {
      await requeueDelivery(trx, {
        webhookId: webhook.id,
        deliveryId: delivery.id,
        now,
        requestId: actor.requestId,
      });
      action = 'requeued';
    } else if (await runNow(trx, delivery.job_id, now)) {
      action = 'runNow';
    }
    await recordAction(trx, actor, {
      activityType: 'webhookDeliveryRetried',
      objectType: 'webhook',
      objectId: webhook.id,
      data: { deliveryId: delivery.id, action },
      at: now,
    });
  });
}
