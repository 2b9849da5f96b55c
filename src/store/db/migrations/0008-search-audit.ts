import { sql, type Kysely, type Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { chainedFieldsOf, chainHash, GENESIS, type StoredAuditRecord } from './frozen/audit-chain.js';
import { alterTables, createTables } from './frozen/ddl.js';

interface ExistingRecord extends StoredAuditRecord {
  seq: number | string;
}

/**
 * Search, reports and audit logs (spec: Reports and audit logs; Scroll context). Scroll contexts are
 * rows, so any node continues a scroll (DESIGN: Storage). The audit log becomes a hash chain per
 * tenant; records written before this migration are chained here, in their order.
 */
export function searchAudit(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createTables(db, d, {
        scroll_contexts: {
          columns: {
            id: 'text primary key',
            tenant_id: 'text not null',
            user_id: 'text not null',
            kind: 'text not null',
            query_hash: 'text not null',
            cursor: 'json not null',
            total: 'integer not null',
            sequence: 'integer not null',
            token_hash: 'text not null',
            timeout_seconds: 'integer not null',
            expires_at: 'timestamp not null',
            created_at: 'timestamp not null',
          },
          indexes: { scroll_contexts_expiry: ['expires_at'] },
        },
      });

      // Reports and search walk documents newest first by (created_at, id): keyset pages stay as fast
      // on the last page as on the first.
      await alterTables(db, d, {
        documents: {
          indexes: {
            documents_tenant_created: ['tenant_id', 'created_at', 'id'],
            documents_tenant_organization_created: ['tenant_id', 'organization_id', 'created_at', 'id'],
          },
        },
        shares: { indexes: { shares_user_document: ['user_id', 'document_id'] } },
      });

      await createTables(db, d, {
        audit_heads: {
          columns: { tenant_id: 'text primary key', last_hash: 'text not null', records: 'integer not null' },
        },
      });
      await alterTables(db, d, { audit_log: { columns: { prev_hash: 'text', hash: 'text' } } });

      const heads = new Map<string, { hash: string; records: number }>();
      const { rows } = await sql<ExistingRecord>`select * from audit_log order by seq`.execute(db);
      for (const row of rows) {
        const previous = heads.get(row.tenant_id) ?? { hash: GENESIS, records: 0 };
        const hash = chainHash(previous.hash, chainedFieldsOf(row));
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
