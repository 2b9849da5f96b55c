import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';

/**
 * The durable job queue (DESIGN: Stack, jobs; Storage, background work) and what webhooks need on
 * top of it: the event outbox, the webhooks, their deliveries and every delivery attempt
 * (Contract: "every attempt recorded").
 */
export function jobsWebhooks(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('jobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('payload', d.jsonType, (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        // null while the job waits behind an earlier job of its lane (ordering_key)
        .addColumn('run_at', d.timestampType)
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('max_attempts', 'integer')
        .addColumn('deadline_at', d.timestampType)
        .addColumn('locked_by', 'text')
        .addColumn('lease_until', d.timestampType)
        .addColumn('last_error', 'text')
        .addColumn('ordering_key', 'text')
        .addColumn('ordering_seq', 'bigint')
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .addColumn('updated_at', d.timestampType, (c) => c.notNull())
        .execute();
      // Claiming walks this index in run_at order; waiting jobs (run_at null) are never in its range.
      await db.schema.createIndex('jobs_due').on('jobs').columns(['status', 'run_at']).execute();
      await db.schema.createIndex('jobs_lease').on('jobs').columns(['status', 'lease_until']).execute();
      await db.schema
        .createIndex('jobs_lane')
        .on('jobs')
        .columns(['ordering_key', 'ordering_seq'])
        .unique()
        .execute();

      // One row per ordering key: its sequence counter, how many of its jobs are not finished, and
      // the row lock that serialises enqueue and hand-off within the lane.
      await db.schema
        .createTable('job_lanes')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('last_seq', 'bigint', (c) => c.notNull())
        .addColumn('active', 'integer', (c) => c.notNull())
        .addColumn('updated_at', d.timestampType, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('document_id', 'text', (c) => c.notNull())
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('occurred_at', d.timestampType, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('events_tenant_time')
        .on('events')
        .columns(['tenant_id', 'occurred_at'])
        .execute();

      await db.schema
        .createTable('webhooks')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
        .addColumn('type', 'text', (c) => c.notNull())
        // null for tenant webhooks, which cover every organization of the tenant
        .addColumn('organization_id', 'text', (c) => c.references('organizations.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('callback_url', 'text', (c) => c.notNull())
        // Kept as given: signing needs the secret itself, so it cannot be hashed (never logged).
        .addColumn('hmac_secret', 'text', (c) => c.notNull())
        .addColumn('creator_id', 'text', (c) => c.notNull())
        .addColumn('creator_name', 'text', (c) => c.notNull())
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('webhooks_scope')
        .on('webhooks')
        .columns(['tenant_id', 'organization_id'])
        .execute();

      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
        .addColumn('event_id', 'text', (c) => c.notNull().references('events.id'))
        // the delivery's place in its webhook's lane: the order events are sent in
        .addColumn('seq', 'bigint', (c) => c.notNull())
        // the job that delivers it now; a manual retry of a finished delivery points it to a new job
        .addColumn('job_id', 'text', (c) => c.notNull())
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_webhook')
        .on('webhook_deliveries')
        .columns(['webhook_id', 'seq'])
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_job')
        .on('webhook_deliveries')
        .column('job_id')
        .execute();

      await db.schema
        .createTable('webhook_attempts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('delivery_id', 'text', (c) =>
          c.notNull().references('webhook_deliveries.id').onDelete('cascade'),
        )
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('attempted_at', d.timestampType, (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('latency_ms', 'integer', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('success', 'integer', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('webhook_attempts_delivery')
        .on('webhook_attempts')
        .columns(['delivery_id', 'attempt'])
        .execute();
    },
  };
}
