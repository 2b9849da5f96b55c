import type { Actor } from '../core/access/actor.js';
import { deleteRow } from '../core/changes/recorded-rows.js';
import type { Deps } from '../core/deps.js';
import { loadChangeableEnum } from '../core/access/enum-access.js';

/**
 * DELETE /enums/:name: its creator or the organization's administrators. Its files stay used (a
 * file id is used once, spec Files usage rule 1), and the name is free again.
 */
export async function deleteEnum(deps: Deps, actor: Actor, name: string): Promise<void> {
  const row = await loadChangeableEnum(deps.db, actor, name);
  const audit = { activityType: 'enumDeleted', objectType: 'enum', data: { name: row.name } };
  await deleteRow(deps, actor, { from: 'enums', id: row.id, audit });
}
