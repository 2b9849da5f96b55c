import { createHash } from 'node:crypto';

/*
 * The audit chain's hash, a persisted format: every stored record's `hash` was computed by these
 * rules (0008-search-audit.ts chained the records written before it; core/audit writes and
 * audit/verify-chain.ts checks every later one), so they can never change, and they are defined once
 * here, frozen with the migration that first applied them. Live code takes them through
 * core/audit/chain.ts. Imports nothing of Signery's.
 */

/** The fields of an audit record that its hash covers (everything but the chain columns and `seq`). */
export interface ChainedFields {
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
export const GENESIS = '0'.repeat(64);

/**
 * Tamper evidence for the audit log: each record's hash covers its content and the hash of the record
 * before it in the same tenant, so changing, removing or reordering a record breaks every link after
 * it. JSON is canonical (sorted keys) because PostgreSQL's jsonb does not keep the order it was given.
 *
 * ```ts
 * const hash = chainHash(previous.hash, { id, tenantId, occurredAt, ... });
 * ```
 */
export function chainHash(previousHash: string, fields: ChainedFields): string {
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

/** An `audit_log` row as a query returns it: `data` is parsed on PostgreSQL (jsonb), text on SQLite. */
export interface StoredAuditRecord {
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
 * What the hash of a stored record covers, read from its row on either database.
 *
 * ```ts
 * const intact = chainHash(row.prev_hash, chainedFieldsOf(row)) === row.hash;
 * ```
 */
export function chainedFieldsOf(row: StoredAuditRecord): ChainedFields {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    occurredAt: new Date(row.occurred_at).toISOString(),
    actorId: row.actor_id,
    activityType: row.activity_type,
    objectType: row.object_type,
    objectId: row.object_id,
    requestId: row.request_id,
    data: typeof row.data === 'string' ? (JSON.parse(row.data) as unknown) : row.data,
  };
}

/** JSON with object keys sorted at every level: one text for one value, whatever stored it. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}
