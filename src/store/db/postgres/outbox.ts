import { sql, type Kysely } from 'kysely';
import { beforeCommit, type Outbox, type OutboxEntry } from '../dialect.js';
import type { Database } from '../schema.js';

/**
 * PostgreSQL, where each statement is a round trip that costs more than the work: the event, the
 * covering webhooks (not paused: core/events/webhook-holders.ts), their lanes, jobs and deliveries in one statement (lane locks taken in webhook
 * id order), sent with the COMMIT (`beforeCommit`).
 */
export const postgresOutbox: Outbox = Object.freeze({
  async write(trx: Kysely<Database>, entry: OutboxEntry, onDelivered: () => Promise<void>): Promise<void> {
    const { event } = entry;
    // `hooks` is materialized (it is read twice), so each webhook gets one delivery id and one job id.
    const statement = sql<{ id: string }>`
      with event as (
        insert into events (id, tenant_id, organization_id, document_id, event, actor, occurred_at)
        values (${entry.eventId}, ${event.tenantId}, ${event.organizationId}, ${event.documentId}, ${event.event},
                ${event.actor}, ${entry.at}::timestamptz)
      ),
      hooks as materialized (
        select id as webhook_id, ${entry.lanePrefix}::text || id as lane,
               gen_random_uuid()::text as delivery_id, gen_random_uuid()::text as job_id
        from webhooks
        where tenant_id = ${event.tenantId} and paused_at is null
          and (type = 'tenant' or (type = 'organization' and organization_id = ${event.organizationId}))
      ),
      lanes as (
        insert into job_lanes (key, last_seq, active, updated_at)
        select lane, 1, 1, ${entry.at}::timestamptz from hooks order by webhook_id
        on conflict (key) do update
          set last_seq = job_lanes.last_seq + 1, active = job_lanes.active + 1, updated_at = excluded.updated_at
        returning key, last_seq, active
      ),
      queued as (
        insert into jobs (id, type, payload, status, run_at, attempts, max_attempts, deadline_at,
                          ordering_key, ordering_seq, created_at, updated_at)
        select h.job_id, ${entry.jobType},
               jsonb_build_object('deliveryId', h.delivery_id, 'webhookId', h.webhook_id,
                                  'event', ${event.event}::text, 'body', ${entry.body}::text)
                 || ${requestIdPayload(entry.requestId)}::jsonb,
               'queued', case when l.active > 1 then null else ${entry.at}::timestamptz end, 0, null,
               ${entry.deadline}::timestamptz, l.key, l.last_seq, ${entry.at}::timestamptz, ${entry.at}::timestamptz
        from hooks h join lanes l on l.key = h.lane
      )
      insert into webhook_deliveries (id, webhook_id, event_id, seq, job_id, created_at)
      select h.delivery_id, h.webhook_id, ${entry.eventId}, l.last_seq, h.job_id, ${entry.at}::timestamptz
      from hooks h join lanes l on l.key = h.lane
      order by h.webhook_id
      returning id
    `;
    await beforeCommit(trx, statement.compile(trx), async (rows) => {
      // Nothing to wake the workers for without a covering webhook.
      if (rows.length > 0) await onDelivered();
    });
  },
});

/** The `requestId` member of a delivery job's payload as enqueue() writes it: absent without one. */
function requestIdPayload(requestId: string | undefined): string {
  return JSON.stringify(requestId === undefined ? {} : { requestId });
}
