import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { deleteLane } from '../jobs/queue.js';
import { writeTransaction } from '../store/db/dialect.js';
import { webhookLane } from '../core/events/delivery-job.js';
import { loadVisibleWebhook } from './webhook-access.js';

/**
 * DELETE /webhooks/:webhookId (spec: Webhooks; no update: delete and recreate). The webhook goes with
 * its pending deliveries and their history; nothing more is sent to it. A delivery in flight at that
 * moment may still arrive once.
 */
export async function deleteWebhook(deps: Deps, actor: Actor, webhookId: string): Promise<void> {
  const webhook = await loadVisibleWebhook(deps, actor, webhookId);
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await deleteLane(trx, webhookLane(webhook.id));
    await trx
      .deleteFrom('webhook_attempts')
      .where('delivery_id', 'in', (eb) =>
        eb.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', webhook.id),
      )
      .execute();
    await trx.deleteFrom('webhook_deliveries').where('webhook_id', '=', webhook.id).execute();
    await trx.deleteFrom('webhooks').where('id', '=', webhook.id).execute();
    await recordAction(trx, actor, {
      activityType: 'webhookDeleted',
      objectType: 'webhook',
      objectId: webhook.id,
      data: { type: webhook.type, name: webhook.name },
      at: deps.clock.now(),
    });
  });
}
