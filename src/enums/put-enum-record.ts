import type { Actor } from '../core/access/actor.js';
import { baseVersion, changeRow } from '../core/changes/recorded-rows.js';
import type { Deps } from '../core/deps.js';
import { LimitExceeded } from '../base/errors.js';
import { writeJson } from '../store/db/json.js';
import { claimRecordFiles, type RecordInput } from './claim-record-files.js';
import { enumRecords, loadChangeableEnum } from '../core/access/enum-access.js';
import { enumView, type EnumView } from './enum-view.js';
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
  const expected = baseVersion(row, expectedVersion);
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
    return changeRow(trx, actor, {
      table: 'enums',
      id: row.id,
      expectedVersion: expected,
      set: { records: writeJson(next) },
      audit: {
        activityType: previous ? 'enumRecordReplaced' : 'enumRecordAdded',
        objectType: 'enum',
        data: (saved) => ({ name: row.name, value: input.value, version: saved.version }),
      },
      now,
    });
  });
  return enumView(deps.db, updated);
}
