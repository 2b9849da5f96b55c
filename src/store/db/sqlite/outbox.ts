import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Outbox, OutboxEntry } from '../dialect.js';
import { insertQueuedJob } from '../job-rows.js';
import type { Database } from '../schema.js';

/**
 * SQLite, where a statement costs no round trip: the event, then for each covering webhook that is
 * not paused (core/events/webhook-holders.ts; in id
 * order, as every emitter takes the lanes) its lane's job and the delivery, one statement each.
 */
export const sqliteOutbox: Outbox = Object.freeze({
  async write(trx: Kysely<Database>, entry: OutboxEntry, onDelivered: () => Promise<void>): Promise<void> {
    const { event } = entry;
    await trx
      .insertInto('events')
      .values({
        id: entry.eventId,
        tenant_id: event.tenantId,
        organization_id: event.organizationId,
        document_id: event.documentId,
        event: event.event,
        actor: event.actor,
        occurred_at: entry.at,
      })
      .execute();
    const webhooks = await trx
      .selectFrom('webhooks')
      .select('id')
      .where('tenant_id', '=', event.tenantId)
      .where('paused_at', 'is', null)
      .where((eb) =>
        eb.or([
          eb('type', '=', 'tenant'),
          eb.and([eb('type', '=', 'organization'), eb('organization_id', '=', event.organizationId)]),
        ]),
      )
      .orderBy('id')
      .execute();
    let delivered = false;
    for (const webhook of webhooks) {
      const deliveryId = randomUUID();
      const jobId = randomUUID();
      const job = await insertQueuedJob(trx, {
        id: jobId,
        type: entry.jobType,
        payload: JSON.stringify({
          webhookId: webhook.id,
          deliveryId,
          event: event.event,
          body: entry.body,
          ...(entry.requestId === undefined ? {} : { requestId: entry.requestId }),
        }),
        runAt: entry.at,
        maxAttempts: null,
        deadlineAt: entry.deadline,
        orderingKey: entry.lanePrefix + webhook.id,
        now: entry.at,
      });
      delivered ||= job.inserted;
      await trx
        .insertInto('webhook_deliveries')
        .values({
          id: deliveryId,
          webhook_id: webhook.id,
          event_id: entry.eventId,
          seq: job.orderingSeq ?? 0,
          job_id: jobId,
          created_at: entry.at,
        })
        .execute();
    }
    if (delivered) await onDelivered();
  },
});
