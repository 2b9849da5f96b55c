import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../access/actor.js';
import type { Database } from '../../store/db/schema.js';
import { writeJson } from '../../store/db/json.js';
import { chainHash, GENESIS, type ChainedFields } from './chain.js';

export interface AuditEntry {
  tenantId: string;
  /** The actor's login name (DESIGN: "In audit logs actorId is the actor's login name"). */
  actorId: string | null;
  /** What happened, e.g. `logged`, `userCreated`, `apiKeyRevoked`. */
  activityType: string;
  objectType?: string;
  objectId?: string;
  requestId?: string;
  /** Further detail; never secrets. */
  data?: Record<string, unknown>;
  at: Date;
}

/**
 * Writes one audit record. Pass the transaction of the change it describes (always a transaction: the
 * chain head it locks must stay locked until the record commits), so the change and its record commit
 * or roll back together.
 *
 * ```ts
 * await db.transaction().execute(async (trx) => {
 *   await trx.updateTable('users').set({ status }).where('id', '=', id).execute();
 *   await record(trx, { tenantId, actorId: actor.name, activityType: 'userSuspended', objectType: 'user', objectId: id, at });
 * });
 * ```
 */
export async function record(db: Kysely<Database>, entry: AuditEntry): Promise<void> {
  const data = writeJson(entry.data ?? {});
  const fields: ChainedFields = {
    id: randomUUID(),
    tenantId: entry.tenantId,
    occurredAt: entry.at.toISOString(),
    actorId: entry.actorId,
    activityType: entry.activityType,
    objectType: entry.objectType ?? null,
    objectId: entry.objectId ?? null,
    requestId: entry.requestId ?? null,
    // Hashed as it is stored and read back, so the verifier recomputes the same value.
    data: JSON.parse(data) as unknown,
  };
  const previousHash = await lockChainHead(db, entry.tenantId);
  const hash = chainHash(previousHash, fields);
  await db
    .insertInto('audit_log')
    .values({
      id: fields.id,
      tenant_id: fields.tenantId,
      occurred_at: fields.occurredAt,
      actor_id: fields.actorId,
      activity_type: fields.activityType,
      object_type: fields.objectType,
      object_id: fields.objectId,
      request_id: fields.requestId,
      data,
      prev_hash: previousHash,
      hash,
    })
    .execute();
  await db
    .updateTable('audit_heads')
    .set({ last_hash: hash })
    .where('tenant_id', '=', entry.tenantId)
    .execute();
}

/** Who an audit record names as having acted: a signed-in caller, by tenant, login name and request. */
export type AuditedActor = Pick<Actor, 'tenantId' | 'name' | 'requestId'>;

/**
 * Writes one audit record of what a caller did: in their tenant, under their login name, with their
 * request's id. Like `record`, in the transaction of the change.
 *
 * ```ts
 * await recordAction(trx, actor, { activityType: 'contactDeleted', objectType: 'contact', objectId: id, at: now });
 * ```
 */
export async function recordAction(
  db: Kysely<Database>,
  actor: AuditedActor,
  entry: Omit<AuditEntry, 'tenantId' | 'actorId' | 'requestId'>,
): Promise<void> {
  await record(db, { ...entry, tenantId: actor.tenantId, actorId: actor.name, requestId: actor.requestId });
}

/**
 * The hash of the tenant's latest record, with the tenant's chain head locked until the caller's
 * transaction ends: the UPDATE takes the row lock on PostgreSQL (SQLite has one writer anyway), so two
 * transactions never chain onto the same record.
 */
async function lockChainHead(trx: Kysely<Database>, tenantId: string): Promise<string> {
  const locked = await trx
    .updateTable('audit_heads')
    .set((eb) => ({ records: eb('records', '+', 1) }))
    .where('tenant_id', '=', tenantId)
    .returning('last_hash')
    .executeTakeFirst();
  if (locked) return locked.last_hash;
  await trx
    .insertInto('audit_heads')
    .values({ tenant_id: tenantId, last_hash: GENESIS, records: 0 })
    .onConflict((oc) => oc.column('tenant_id').doNothing())
    .execute();
  return lockChainHead(trx, tenantId);
}
