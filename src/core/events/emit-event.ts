import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { ringDoorbellWith } from '../../jobs/doorbell.js';
import { beforeCommit, dialectOf } from '../../store/db/dialect.js';
import type { Database } from '../../store/db/schema.js';
import {
  DELIVERY_JOB_TYPE,
  DELIVERY_WINDOW_MS,
  deliveryBody,
  enqueueDelivery,
  webhookLane,
} from './delivery-job.js';

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
  /** The request that made the change: its deliveries' jobs carry it (EnqueueOptions.requestId). */
  requestId?: string | undefined;
}

/**
 * Records an event and queues its delivery to every webhook whose scope covers it: the tenant's
 * tenant webhooks and the webhooks of the document's organization (spec: Webhooks, "a webhook
 * covers all events in its scope"). Call it inside the transaction of the change that causes the
 * event, so both commit or neither does (the outbox: no event is lost to a crash after commit, and
 * none is sent for a change that rolled back). It locks each covering webhook's lane (the lock that
 * keeps its deliveries in commit order) until the commit: on SQLite make it the transaction's last
 * step; on PostgreSQL, in a transaction of `writeTransaction`, its statement goes with the COMMIT
 * wherever it is called (`beforeCommit`). There the workers are woken once it has committed.
 *
 * ```ts
 * await writeTransaction(deps.db, deps.dialect, async (trx) => {
 *   await trx.insertInto('documents').values(row).execute();
 *   await emitEvent(trx, { tenantId, organizationId, documentId, event: 'documentCreated', actor: actor.name, at: now });
 * });
 * ```
 */
export async function emitEvent(trx: Kysely<Database>, event: DocumentEvent): Promise<{ eventId: string }> {
  if (dialectOf(trx).name === 'postgres') return emitInOneStatement(trx, event);
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
  const body = deliveryBody({ ...event, timestamp: at });
  for (const webhook of webhooks) {
    const deliveryId = randomUUID();
    const job = await enqueueDelivery(trx, {
      webhookId: webhook.id,
      deliveryId,
      event: event.event,
      body,
      now: event.at,
      requestId: event.requestId,
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
  }
  return { eventId };
}

/**
 * emitEvent on PostgreSQL, where each statement is a round trip that costs more than the work: the
 * event, the covering webhooks, their lanes, jobs and deliveries in one statement (the same rows
 * and the same lane locks, taken in webhook id order, as the steps above), sent with the COMMIT.
 */
async function emitInOneStatement(trx: Kysely<Database>, event: DocumentEvent): Promise<{ eventId: string }> {
  const eventId = randomUUID();
  const at = event.at.toISOString();
  const deadline = new Date(event.at.getTime() + DELIVERY_WINDOW_MS).toISOString();
  const body = deliveryBody({ ...event, timestamp: at });
  const lanePrefix = webhookLane('');
  // `hooks` is materialized (it is read twice), so each webhook gets one delivery id and one job id.
  const statement = sql<{ id: string }>`
    with event as (
      insert into events (id, tenant_id, organization_id, document_id, event, actor, occurred_at)
      values (${eventId}, ${event.tenantId}, ${event.organizationId}, ${event.documentId}, ${event.event},
              ${event.actor}, ${at}::timestamptz)
    ),
    hooks as materialized (
      select id as webhook_id, ${lanePrefix}::text || id as lane,
             gen_random_uuid()::text as delivery_id, gen_random_uuid()::text as job_id
      from webhooks
      where tenant_id = ${event.tenantId}
        and (type = 'tenant' or (type = 'organization' and organization_id = ${event.organizationId}))
    ),
    lanes as (
      insert into job_lanes (key, last_seq, active, updated_at)
      select lane, 1, 1, ${at}::timestamptz from hooks order by webhook_id
      on conflict (key) do update
        set last_seq = job_lanes.last_seq + 1, active = job_lanes.active + 1, updated_at = excluded.updated_at
      returning key, last_seq, active
    ),
    queued as (
      insert into jobs (id, type, payload, status, run_at, attempts, max_attempts, deadline_at,
                        ordering_key, ordering_seq, created_at, updated_at)
      select h.job_id, ${DELIVERY_JOB_TYPE},
             jsonb_build_object('deliveryId', h.delivery_id, 'webhookId', h.webhook_id,
                                'event', ${event.event}::text, 'body', ${body}::text)
               || ${requestIdPayload(event.requestId)}::jsonb,
             'queued', case when l.active > 1 then null else ${at}::timestamptz end, 0, null,
             ${deadline}::timestamptz, l.key, l.last_seq, ${at}::timestamptz, ${at}::timestamptz
      from hooks h join lanes l on l.key = h.lane
    )
    insert into webhook_deliveries (id, webhook_id, event_id, seq, job_id, created_at)
    select h.delivery_id, h.webhook_id, ${eventId}, l.last_seq, h.job_id, ${at}::timestamptz
    from hooks h join lanes l on l.key = h.lane
    order by h.webhook_id
    returning id
  `;
  await beforeCommit(trx, statement.compile(trx), async (rows) => {
    // Nothing to wake the workers for without a covering webhook.
    if (rows.length > 0) await ringDoorbellWith(trx);
  });
  return { eventId };
}

/** The `requestId` member of a delivery job's payload as enqueue() writes it: absent without one. */
function requestIdPayload(requestId: string | undefined): string {
  return JSON.stringify(requestId === undefined ? {} : { requestId });
}
