import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { LimitExceeded, VersionMismatch } from '../core/errors.js';
import { writeJson } from '../store/db/json.js';
import { claimRecordFiles, type RecordInput } from './claim-record-files.js';
import { loadChangeableEnum } from './enum-access.js';
import { enumRecords, enumView, type EnumView } from './enum-view.js';
import { writeTransaction } from '../store/db/dialect.js';

/** Records one enum may hold (the schema of POST /enums says the same). */
export const ENUM_RECORDS_LIMIT = 1000;

/**
 * PUT /enums/:name/record: adds a record, or replaces the one with the same `value` (in place, so
 * the order stays). A compare-and-set on the enum's `_version`. The replaced record's photo and
 * files may be sent again and are kept; new ones are claimed (spec Files usage rule 1). Files the
 * new record leaves out stay used: a file id is used once.
 */
export async function putEnumRecord(
  deps: Deps,
  actor: Actor,
  name: string,
  input: RecordInput,
  expectedVersion?: number,
): Promise<EnumView> {
  const row = await loadChangeableEnum(deps.db, actor, name);
  const expected = expectedVersion ?? row.version;
  if (expected !== row.version) throw new VersionMismatch();
  const records = enumRecords(row);
  const index = records.findIndex((r) => r.value === input.value);
  const previous = records[index];
  if (!previous && records.length >= ENUM_RECORDS_LIMIT) {
    throw new LimitExceeded(`An enum holds at most ${ENUM_RECORDS_LIMIT} records`);
  }
  const now = deps.clock.now();
  const updated = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const [changed] = await claimRecordFiles(
      trx,
      actor,
      { enumId: row.id, records: [input], prefix: () => '', kept: previous },
      now,
    );
    if (!changed) throw new Error('unreachable: one record in, one out');
    const next = previous ? records.map((r, i) => (i === index ? changed : r)) : [...records, changed];
    const saved = await trx
      .updateTable('enums')
      .set({ records: writeJson(next), version: expected + 1, updated_at: now.toISOString() })
      .where('id', '=', row.id)
      .where('version', '=', expected)
      .returningAll()
      .executeTakeFirst();
    if (!saved) throw new VersionMismatch();
    await recordAction(trx, actor, {
      activityType: previous ? 'enumRecordReplaced' : 'enumRecordAdded',
      objectType: 'enum',
      objectId: row.id,
      data: { name: row.name, value: input.value, version: saved.version },
      at: now,
    });
    return saved;
  });
  return enumView(deps.db, updated);
}
