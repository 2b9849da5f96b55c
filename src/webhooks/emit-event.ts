import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../store/db/schema.js';
import { deliveryBody, enqueueDelivery } from './delivery-job.js';

/** Webhook `event` values (Contract: Sharing and external recipients, Events). */
export const EVENT_NAMES = [
  'documentCreated',
  'documentEdited',
  'documentDeleted',
  'signRequest',
  'signDelegated',
  'signRejected',
  'signExpired',
  'signCancelled',
  'documentSigned',
  'documentCompleted',
  'documentSimpleActionExecuted',
] as const;
export type EventName = (typeof EVENT_NAMES)[number];

export interface DocumentEvent {
  tenantId: string;
  /** The document's organization: its organization webhooks and the tenant's webhooks receive it. */
  organizationId: string;
  documentId: string;
  event: EventName;
  /** The login name of the user who performed the action (spec: Events, `actor`). */
  actor: string;
  /** When the change happened (the change's clock); sent as `timestamp`. */
  at: Date;
}

/**
 * Records an event and queues its delivery to every webhook whose scope covers it: the tenant's
 * tenant webhooks and the webhooks of the document's organization (spec: Webhooks, "a webhook
 * covers all events in its scope"). Call it inside the transaction of the change that causes the
 * event, so both commit or neither does (the outbox: no event is lost to a crash after commit, and
 * none is sent for a change that rolled back). Make it the transaction's last step: it holds each
 * covering webhook's lane (the lock that keeps its deliveries in commit order) until the commit.
 *
 * ```ts
 * await deps.db.transaction().execute(async (trx) => {
 *   await trx.insertInto('documents').values(row).execute();
 *   await emitEvent(trx, { tenantId, organizationId, documentId, event: 'documentCreated', actor: actor.name, at: now });
 * });
 * ```
 */
export async function emitEvent(
  trx: Kysely<Database>,
  event: DocumentEvent,
): Promise<{ eventId: string; deliveryIds: string[] }> {
  const eventId = randomUUID();
  const at = event.at.toISOString();
  await trx
    .insertInto('events')
    .values({
      id: eventId,
      tenant_id: event.tenantId,
      organization_id: event.organizationId,
      document_id: event.documentId,
      event: event.event,
      actor: event.actor,
      occurred_at: at,
    })
    .execute();
  const webhooks = await trx
    .selectFrom('webhooks')
    .select('id')
    .where('tenant_id', '=', event.tenantId)
    .where((eb) =>
      eb.or([
        eb('type', '=', 'tenant'),
        eb.and([eb('type', '=', 'organization'), eb('organization_id', '=', event.organizationId)]),
      ]),
    )
    // Lanes are locked in id order by every emitter: two changes emitting to the same webhooks
    // never wait on each other in a cycle.
    .orderBy('id')
    .execute();
  const deliveryIds: string[] = [];
  const body = deliveryBody({ ...event, timestamp: at });
  for (const webhook of webhooks) {
    const deliveryId = randomUUID();
    const job = await enqueueDelivery(trx, {
      webhookId: webhook.id,
      deliveryId,
      event: event.event,
      body,
      now: event.at,
    });
    await trx
      .insertInto('webhook_deliveries')
      .values({
        id: deliveryId,
        webhook_id: webhook.id,
        event_id: eventId,
        seq: job.orderingSeq ?? 0,
        job_id: job.id,
        created_at: at,
      })
      .execute();
    deliveryIds.push(deliveryId);
  }
  return { eventId, deliveryIds };
}
