import { sql, type Kysely, type Migration } from 'kysely';
import { createHash } from 'node:crypto';
import type { SqlDialect } from '../dialect.js';
import { addColumns, createIndex, createTable } from './frozen/ddl.js';

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
      await createTable(db, d, 'scroll_contexts', {
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
      }).execute();
      await createIndex(db, 'scroll_contexts_expiry', 'scroll_contexts', ['expires_at']);

      // Reports and search walk documents newest first by (created_at, id): keyset pages stay as fast
      // on the last page as on the first.
      await createIndex(db, 'documents_tenant_created', 'documents', ['tenant_id', 'created_at', 'id']);
      await createIndex(db, 'documents_tenant_organization_created', 'documents', [
        'tenant_id',
        'organization_id',
        'created_at',
        'id',
      ]);
      await createIndex(db, 'shares_user_document', 'shares', ['user_id', 'document_id']);

      await createTable(db, d, 'audit_heads', {
        tenant_id: 'text primary key',
        last_hash: 'text not null',
        records: 'integer not null',
      }).execute();
      await addColumns(db, d, 'audit_log', {
        prev_hash: 'text',
        hash: 'text',
      });

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

// The audit chain's rules as this migration applied them (core/audit/chain.ts when it was written):
// a migration is history, so it keeps its own copy rather than following later changes of live code.

/** The fields of an audit record that its hash covers (everything but the chain columns and `seq`). */
interface ChainedFields {
  id: string;
  tenantId: string;
  occurredAt: string;
  actorId: string | null;
  activityType: string;
  objectType: string | null;
  objectId: string | null;
  requestId: string | null;
  data: unknown;
}

/** The `prev_hash` of a tenant's first record. */
const GENESIS = '0'.repeat(64);

/**
 * Tamper evidence for the audit log: each record's hash covers its content and the hash of the record
 * before it in the same tenant, so changing, removing or reordering a record breaks every link after
 * it. JSON is canonical (sorted keys) because PostgreSQL's jsonb does not keep the order it was given.
 *
 * ```ts
 * const hash = chainHash(previous.hash, { id, tenantId, occurredAt, ... });
 * ```
 */
function chainHash(previousHash: string, fields: ChainedFields): string {
  return createHash('sha256')
    .update(previousHash)
    .update('\n')
    .update(
      canonicalJson([
        fields.id,
        fields.tenantId,
        fields.occurredAt,
        fields.actorId,
        fields.activityType,
        fields.objectType,
        fields.objectId,
        fields.requestId,
        fields.data,
      ]),
    )
    .digest('hex');
}

/** JSON with object keys sorted at every level: one text for one value, whatever stored it. */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}
