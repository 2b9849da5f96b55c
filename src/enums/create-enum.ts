import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import type { CreateEnumBody } from './contract.js';
import type { Actor } from '../core/access/actor.js';
import { insertVersionedRow } from '../core/changes/recorded-rows.js';
import type { Deps } from '../core/deps.js';
import { Conflict, ValidationError } from '../base/errors.js';
import { writeJson } from '../store/db/json.js';
import { claimRecordFiles } from './claim-record-files.js';
import { assertMayCreateEnum } from '../core/access/enum-access.js';
import { enumView, type EnumView } from './enum-view.js';
import { writeTransaction } from '../store/db/dialect.js';

export type NewEnum = Static<typeof CreateEnumBody>;

/**
 * POST /enums: a named value list of the caller's organization (enum-access.ts says who may). The
 * name is unique in the organization; record values are unique in the enum. Record files are
 * claimed for the enum in the same transaction as the record and its audit entry.
 */
export async function createEnum(deps: Deps, actor: Actor, input: NewEnum): Promise<EnumView> {
  assertMayCreateEnum(actor);
  const records = input.records ?? [];
  const values = records.map((r) => r.value);
  const twice = values.findIndex((v, i) => values.indexOf(v) !== i);
  if (twice >= 0) {
    throw new ValidationError(`records[${twice}].value`, 'contains a duplicate value');
  }
  const now = deps.clock.now();
  const id = randomUUID();
  try {
    const row = await writeTransaction(deps.db, deps.dialect, async (trx) => {
      const taken = await trx
        .selectFrom('enums')
        .select('id')
        .where('tenant_id', '=', actor.tenantId)
        .where('organization_id', '=', actor.organizationId)
        .where('name', '=', input.name)
        .executeTakeFirst();
      if (taken) throw new Conflict(`An enum named ${input.name} already exists`);
      const claimed = await claimRecordFiles(
        trx,
        actor,
        { enumId: id, records, prefix: (i) => `records[${i}].` },
        now,
      );
      const values = {
        id,
        organization_id: actor.organizationId,
        name: input.name,
        label: input.label ?? null,
        records: writeJson(claimed),
        created_by: actor.userId,
      };
      const data = { name: input.name, records: claimed.length };
      const audit = { activityType: 'enumCreated', objectType: 'enum', data };
      const row = await insertVersionedRow(trx, actor, 'enums', values, audit, now);
      return { ...row, records: claimed };
    });
    return enumView(deps.db, row);
  } catch (error) {
    // Two requests racing for one name: the unique index lets one win; the other is told as above.
    if (isUniqueViolation(error)) throw new Conflict(`An enum named ${input.name} already exists`);
    throw error;
  }
}

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}
