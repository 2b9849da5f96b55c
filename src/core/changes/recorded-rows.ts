import type { Kysely, Selectable, Updateable } from 'kysely';
import { recordAction, type AuditedActor } from '../audit/record.js';
import type { Deps } from '../deps.js';
import { VersionMismatch } from '../../base/errors.js';
import { writeTransaction } from '../../store/db/dialect.js';
import type { TenantRowTable } from '../../store/db/rows.js';
import type { Database } from '../../store/db/schema.js';

/**
 * The writes of the simple records (contacts, enums, stamps, webhooks, users...), each with its audit
 * record in the same transaction. Kysely types columns for a table named by a literal, not by a type
 * parameter: each statement here is typed for a stand-in table with the columns it uses, and its
 * callers for their own table.
 */

/** What a row's audit record says besides who, when and in which request; its object is the row. */
export interface RowAudit {
  activityType: string;
  objectType: string;
  data?: Record<string, unknown>;
}

/** The tables whose rows change as a compare-and-set on `version` (the API's `_version`). */
export type VersionedTable = 'contacts' | 'enums' | 'stamps';

/**
 * The version a change is based on: the `_version` the request names, else the row's current one.
 * A stale one is 409 VERSION_MISMATCH.
 */
export function baseVersion(row: { version: number }, requested: number | undefined): number {
  const expected = requested ?? row.version;
  if (expected !== row.version) throw new VersionMismatch();
  return expected;
}

/** The columns `insertVersionedRow` fills in. */
type Filled = 'tenant_id' | 'created_at' | 'updated_at' | 'version';

/**
 * Inserts a new row of the caller's tenant at version 1, created and modified now, with its audit
 * record, in the caller's transaction. Returns the row as stored.
 */
export async function insertVersionedRow<T extends VersionedTable>(
  trx: Kysely<Database>,
  actor: AuditedActor,
  table: T,
  values: Omit<Selectable<Database[T]>, Filled> & { id: string },
  audit: RowAudit,
  now: Date,
): Promise<Selectable<Database[T]>> {
  const row = {
    ...values,
    tenant_id: actor.tenantId,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    version: 1,
  };
  const rows = trx as unknown as Kysely<{ row: { id: string } }>;
  await rows
    .insertInto(table as unknown as 'row')
    .values(row)
    .execute();
  await recordAction(trx, actor, { ...audit, objectId: row.id, at: now });
  return row as Selectable<Database[T]>;
}

/**
 * Changes one row as a compare-and-set on `version`, in the caller's transaction, with its audit
 * record (`data` from the changed row). Of two changes to one version one wins; the other is 409
 * VERSION_MISMATCH.
 */
export async function changeRow<T extends VersionedTable>(
  trx: Kysely<Database>,
  actor: AuditedActor,
  options: {
    table: T;
    id: string;
    expectedVersion: number;
    set: Updateable<Database[T]>;
    audit: Omit<RowAudit, 'data'> & { data: (changed: Selectable<Database[T]>) => Record<string, unknown> };
    now: Date;
  },
): Promise<Selectable<Database[T]>> {
  const { expectedVersion, now } = options;
  const rows = trx as unknown as Kysely<{ row: { id: string; version: number; updated_at: string } }>;
  const changed = (await rows
    .updateTable(options.table as unknown as 'row')
    .set({ ...options.set, version: expectedVersion + 1, updated_at: now.toISOString() })
    .where('id', '=', options.id)
    .where('version', '=', expectedVersion)
    .returningAll()
    .executeTakeFirst()) as Selectable<Database[T]> | undefined;
  if (!changed) throw new VersionMismatch();
  const { data, ...audit } = options.audit;
  await recordAction(trx, actor, { ...audit, objectId: options.id, data: data(changed), at: now });
  return changed;
}

/**
 * Deletes one row in a transaction of its own, with its audit record. `dependents` first deletes, in
 * the same transaction, what goes with the row.
 */
export async function deleteRow(
  deps: Pick<Deps, 'db' | 'dialect' | 'clock'>,
  actor: AuditedActor,
  options: {
    from: TenantRowTable;
    id: string;
    audit: RowAudit;
    dependents?: (trx: Kysely<Database>, now: Date) => Promise<void>;
  },
): Promise<void> {
  const now = deps.clock.now();
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await options.dependents?.(trx, now);
    const rows = trx as unknown as Kysely<{ row: { id: string } }>;
    await rows
      .deleteFrom(options.from as unknown as 'row')
      .where('id', '=', options.id)
      .execute();
    await recordAction(trx, actor, { ...options.audit, objectId: options.id, at: now });
  });
}
