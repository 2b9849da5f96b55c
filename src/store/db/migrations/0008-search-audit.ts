import { sql, type Kysely, type Migration } from 'kysely';
import { chainHash, GENESIS } from '../../../audit/chain.js';
import type { SqlDialect } from '../dialect.js';

interface ExistingRecord {
  seq: number | string;
  id: string;
  tenant_id: string;
  occurred_at: string | Date;
  actor_id: string | null;
  activity_type: string;
  object_type: string | null;
  object_id: string | null;
  request_id: string | null;
  data: unknown;
}

/**
 * Search, reports and audit logs (spec: Reports and audit logs; Scroll context). Scroll contexts are
 * rows, so any node continues a scroll (DESIGN: Storage). The audit log becomes a hash chain per
 * tenant; records written before this migration are chained here, in their order.
 */
export function searchAudit(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('scroll_contexts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('query_hash', 'text', (c) => c.notNull())
        .addColumn('cursor', d.jsonType, (c) => c.notNull())
        .addColumn('total', 'integer', (c) => c.notNull())
        .addColumn('sequence', 'integer', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull())
        .addColumn('timeout_seconds', 'integer', (c) => c.notNull())
        .addColumn('expires_at', d.timestampType, (c) => c.notNull())
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('scroll_contexts_expiry')
        .on('scroll_contexts')
        .column('expires_at')
        .execute();

      // Reports and search walk documents newest first by (created_at, id): keyset pages stay as fast
      // on the last page as on the first.
      await db.schema
        .createIndex('documents_tenant_created')
        .on('documents')
        .columns(['tenant_id', 'created_at', 'id'])
        .execute();
      await db.schema
        .createIndex('documents_tenant_organization_created')
        .on('documents')
        .columns(['tenant_id', 'organization_id', 'created_at', 'id'])
        .execute();
      await db.schema
        .createIndex('shares_user_document')
        .on('shares')
        .columns(['user_id', 'document_id'])
        .execute();

      await db.schema
        .createTable('audit_heads')
        .addColumn('tenant_id', 'text', (c) => c.primaryKey())
        .addColumn('last_hash', 'text', (c) => c.notNull())
        .addColumn('records', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.alterTable('audit_log').addColumn('prev_hash', 'text').execute();
      await db.schema.alterTable('audit_log').addColumn('hash', 'text').execute();

      const heads = new Map<string, { hash: string; records: number }>();
      const { rows } = await sql<ExistingRecord>`select * from audit_log order by seq`.execute(db);
      for (const row of rows) {
        const previous = heads.get(row.tenant_id) ?? { hash: GENESIS, records: 0 };
        const hash = chainHash(previous.hash, {
          id: row.id,
          tenantId: row.tenant_id,
          occurredAt: new Date(row.occurred_at).toISOString(),
          actorId: row.actor_id,
          activityType: row.activity_type,
          objectType: row.object_type,
          objectId: row.object_id,
          requestId: row.request_id,
          data: typeof row.data === 'string' ? (JSON.parse(row.data) as unknown) : row.data,
        });
        await sql`update audit_log set prev_hash = ${previous.hash}, hash = ${hash} where seq = ${row.seq}`.execute(
          db,
        );
        heads.set(row.tenant_id, { hash, records: previous.records + 1 });
      }
      for (const [tenantId, head] of heads) {
        await sql`insert into audit_heads (tenant_id, last_hash, records) values (${tenantId}, ${head.hash}, ${head.records})`.execute(
          db,
        );
      }
    },
  };
}
