import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { loadManageableStamp } from '../core/stamps/stamp-access.js';
import { writeTransaction } from '../store/db/dialect.js';

/**
 * DELETE /stamps/:id: the stamp can no longer be used. Documents already signed with it keep its
 * image (it is drawn into the PDF), and the image file stays claimed so it is not reused.
 */
export async function deleteStamp(deps: Deps, actor: Actor, id: string): Promise<void> {
  const stamp = await loadManageableStamp(deps.db, actor, id);
  const now = deps.clock.now();
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await trx.deleteFrom('stamps').where('id', '=', stamp.id).execute();
    await recordAction(trx, actor, {
      activityType: 'stampDeleted',
      objectType: 'stamp',
      objectId: stamp.id,
      data: { scope: stamp.scope, name: stamp.name },
      at: now,
    });
  });
}
