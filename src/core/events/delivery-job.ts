import type { Kysely } from 'kysely';
import { enqueue, type EnqueuedJob } from '../../jobs/queue.js';
import type { Database } from '../../store/db/schema.js';

/** The job that delivers one event to one webhook. */
export const DELIVERY_JOB_TYPE = 'webhook.deliver';

/**
 * Its payload: the delivery, and what the request needs (so an attempt reads nothing but the
 * webhook's URL and secret). `body` and `event` are absent in a retry queued by hand; the attempt
 * then reads them from the event.
 */
export interface DeliveryPayload {
  deliveryId: string;
  webhookId: string;
  event?: string | undefined;
  /** The request body, `{documentId, event, actor, timestamp}` as JSON. */
  body?: string | undefined;
}

/** The request body of an event (Contract: webhook delivery). */
export function deliveryBody(event: {
  documentId: string;
  event: string;
  actor: string;
  timestamp: string;
}): string {
  return JSON.stringify({
    documentId: event.documentId,
    event: event.event,
    actor: event.actor,
    timestamp: event.timestamp,
  });
}

/** Contract: "retries with exponential backoff for 24 hours". */
export const DELIVERY_WINDOW_MS = 24 * 3_600_000;

/**
 * One lane per webhook: its deliveries go out one at a time, in the order their events committed
 * (a later event waits while an earlier one is pending or retrying).
 */
export function webhookLane(webhookId: string): string {
  return `webhook:${webhookId}`;
}

/**
 * Sends an existing delivery again (a manual retry, a replay): a new attempt series under the same
 * delivery id, behind the webhook's waiting deliveries, which the delivery row then names.
 */
export async function requeueDelivery(
  trx: Kysely<Database>,
  delivery: { webhookId: string; deliveryId: string; now: Date; requestId: string | undefined },
): Promise<void> {
  const job = await enqueueDelivery(trx, delivery);
  await trx
    .updateTable('webhook_deliveries')
    .set({ job_id: job.id })
    .where('id', '=', delivery.deliveryId)
    .execute();
}

/** Queues a delivery attempt series: due now (or behind the webhook's earlier deliveries), for 24 hours. */
export function enqueueDelivery(
  trx: Kysely<Database>,
  delivery: DeliveryPayload & { now: Date; requestId: string | undefined },
): Promise<EnqueuedJob> {
  const { now, requestId, ...payload } = delivery;
  return enqueue(trx, {
    type: DELIVERY_JOB_TYPE,
    payload: { ...payload },
    now,
    requestId,
    deadline: new Date(now.getTime() + DELIVERY_WINDOW_MS),
    orderingKey: webhookLane(delivery.webhookId),
  });
}
