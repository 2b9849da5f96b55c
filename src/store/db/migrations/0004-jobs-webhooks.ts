import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { createIndex, createTable } from './frozen/ddl.js';

/**
 * The durable job queue (DESIGN: Stack, jobs; Storage, background work) and what webhooks need on
 * top of it: the event outbox, the webhooks, their deliveries and every delivery attempt
 * (Contract: "every attempt recorded").
 */
export function jobsWebhooks(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createTable(db, d, 'jobs', {
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
        created_at: 'timestamp not null',
        updated_at: 'timestamp not null',
      }).execute();
      // Claiming walks this index in run_at order; waiting jobs (run_at null) are never in its range.
      await createIndex(db, 'jobs_due', 'jobs', ['status', 'run_at']);
      await createIndex(db, 'jobs_lease', 'jobs', ['status', 'lease_until']);
      await createIndex(db, 'jobs_lane', 'jobs', ['ordering_key', 'ordering_seq'], { unique: true });

      // One row per ordering key: its sequence counter, how many of its jobs are not finished, and
      // the row lock that serialises enqueue and hand-off within the lane.
      await createTable(db, d, 'job_lanes', {
        key: 'text primary key',
        last_seq: 'bigint not null',
        active: 'integer not null',
        updated_at: 'timestamp not null',
      }).execute();

      await createTable(db, d, 'events', {
        id: 'text primary key',
        tenant_id: 'text not null',
        organization_id: 'text not null',
        document_id: 'text not null',
        event: 'text not null',
        actor: 'text not null',
        occurred_at: 'timestamp not null',
      }).execute();
      await createIndex(db, 'events_tenant_time', 'events', ['tenant_id', 'occurred_at']);

      await createTable(db, d, 'webhooks', {
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
      }).execute();
      await createIndex(db, 'webhooks_scope', 'webhooks', ['tenant_id', 'organization_id']);

      await createTable(db, d, 'webhook_deliveries', {
        id: 'text primary key',
        webhook_id: 'text not null references webhooks.id on delete cascade',
        event_id: 'text not null references events.id',
        // the delivery's place in its webhook's lane: the order events are sent in
        seq: 'bigint not null',
        // the job that delivers it now; a manual retry of a finished delivery points it to a new job
        job_id: 'text not null',
        created_at: 'timestamp not null',
      }).execute();
      await createIndex(db, 'webhook_deliveries_webhook', 'webhook_deliveries', ['webhook_id', 'seq']);
      await createIndex(db, 'webhook_deliveries_job', 'webhook_deliveries', ['job_id']);

      await createTable(db, d, 'webhook_attempts', {
        id: 'text primary key',
        delivery_id: 'text not null references webhook_deliveries.id on delete cascade',
        attempt: 'integer not null',
        attempted_at: 'timestamp not null',
        status_code: 'integer',
        latency_ms: 'integer not null',
        error: 'text',
        success: 'integer not null',
      }).execute();
      await createIndex(db, 'webhook_attempts_delivery', 'webhook_attempts', ['delivery_id', 'attempt']);
    },
  };
}
