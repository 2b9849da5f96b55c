import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { loadChangeableEnum } from './enum-access.js';
import { writeTransaction } from '../store/db/dialect.js';

/**
 * DELETE /enums/:name: its creator or the organization's administrators. Its files stay used (a
 * file id is used once, spec Files usage rule 1), and the name is free again.
 */
export async function deleteEnum(deps: Deps, actor: Actor, name: string): Promise<void> {
  const row = await loadChangeableEnum(deps.db, actor, name);
  const now = deps.clock.now();
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await trx.deleteFrom('enums').where('id', '=', row.id).execute();
    await recordAction(trx, actor, {
      activityType: 'enumDeleted',
      objectType: 'enum',
      objectId: row.id,
      data: { name: row.name },
      at: now,
    });
  });
}
