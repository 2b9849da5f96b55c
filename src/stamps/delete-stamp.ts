import type { Actor } from '../core/access/actor.js';
import { deleteRow } from '../core/changes/recorded-rows.js';
import type { Deps } from '../core/deps.js';
import { loadManageableStamp } from '../core/stamps/stamp-access.js';

/**
 * DELETE /stamps/:id: the stamp can no longer be used. Documents already signed with it keep its
 * image (it is drawn into the PDF), and the image file stays claimed so it is not reused.
 */
export async function deleteStamp(deps: Deps, actor: Actor, id: string): Promise<void> {
  const stamp = await loadManageableStamp(deps.db, actor, id);
  const data = { scope: stamp.scope, name: stamp.name };
  await deleteRow(deps, actor, {
    from: 'stamps',
    id: stamp.id,
    audit: { activityType: 'stampDeleted', objectType: 'stamp', data },
  });
}
