import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { createTables, TIMESTAMPS } from './frozen/ddl.js';

/**
 * The durable job queue (DESIGN: Stack, jobs; Storage, background work) and what webhooks need on
 * top of it: the event outbox, the webhooks, their deliveries and every delivery attempt
 * (Contract: "every attempt recorded").
 */
export function jobsWebhooks(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createTables(db, d, {
        jobs: {
          columns: {
            id: 'text primary key',
            type: 'text not null',
            payload: 'json not null',
            status: 'text not null',
            // null while the job waits behind an earlier job of its lane (ordering_key)
            run_at: 'timestamp',
            attempts: 'integer not null default 0',
            max_attempts: 'integer',
            deadline_at: 'timestamp',
            locked_by: 'text',
            lease_until: 'timestamp',
            last_error: 'text',
            ordering_key: 'text',
            ordering_seq: 'bigint',
            ...TIMESTAMPS,
          },
          indexes: {
            // Claiming walks this index in run_at order; waiting jobs (run_at null) are never in its range.
            jobs_due: ['status', 'run_at'],
            jobs_lease: ['status', 'lease_until'],
          },
          uniqueIndexes: { jobs_lane: ['ordering_key', 'ordering_seq'] },
        },
        // One row per ordering key: its sequence counter, how many of its jobs are not finished, and
        // the row lock that serialises enqueue and hand-off within the lane.
        job_lanes: {
          columns: {
            key: 'text primary key',
            last_seq: 'bigint not null',
            active: 'integer not null',
            updated_at: 'timestamp not null',
          },
        },
        events: {
          columns: {
            id: 'text primary key',
            tenant_id: 'text not null',
            organization_id: 'text not null',
            document_id: 'text not null',
            event: 'text not null',
            actor: 'text not null',
            occurred_at: 'timestamp not null',
          },
          indexes: { events_tenant_time: ['tenant_id', 'occurred_at'] },
        },
        webhooks: {
          columns: {
            id: 'text primary key',
            tenant_id: 'text not null references tenants.id',
            type: 'text not null',
            // null for tenant webhooks, which cover every organization of the tenant
            organization_id: 'text references organizations.id',
            name: 'text not null',
            callback_url: 'text not null',
            // Kept as given: signing needs the secret itself, so it cannot be hashed (never logged).
            hmac_secret: 'text not null',
            creator_id: 'text not null',
            creator_name: 'text not null',
            created_at: 'timestamp not null',
          },
          indexes: { webhooks_scope: ['tenant_id', 'organization_id'] },
        },
        webhook_deliveries: {
          columns: {
            id: 'text primary key',
            webhook_id: 'text not null references webhooks.id on delete cascade',
            event_id: 'text not null references events.id',
            // the delivery's place in its webhook's lane: the order events are sent in
            seq: 'bigint not null',
            // the job that delivers it now; a manual retry of a finished delivery points it to a new job
            job_id: 'text not null',
            created_at: 'timestamp not null',
          },
          indexes: {
            webhook_deliveries_webhook: ['webhook_id', 'seq'],
            webhook_deliveries_job: ['job_id'],
          },
        },
        webhook_attempts: {
          columns: {
            id: 'text primary key',
            delivery_id: 'text not null references webhook_deliveries.id on delete cascade',
            attempt: 'integer not null',
            attempted_at: 'timestamp not null',
            status_code: 'integer',
            latency_ms: 'integer not null',
            error: 'text',
            success: 'integer not null',
          },
          indexes: { webhook_attempts_delivery: ['delivery_id', 'attempt'] },
        },
      });
    },
  };
}
