import { createHash } from 'node:crypto';

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

/** JSON with object keys sorted at every level: one text for one value, whatever stored it. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}
