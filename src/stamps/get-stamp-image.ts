import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import type { FileRecord } from '../store/files/file-store.js';
import { findInTenant } from '../store/db/rows.js';
import { loadUsableStamp } from '../core/stamps/load-usable-stamp.js';
import { maySeeStamp } from '../core/stamps/stamp-access.js';

/**
 * GET /stamps/:id/image: the image of a stamp the caller may use (or, as its administrator, manage);
 * anyone else gets "not found".
 */
export async function getStampImage(deps: Deps, actor: Actor, id: string): Promise<FileRecord> {
  const stamp = await findInTenant(deps.db, 'stamps', actor.tenantId, id);
  if (stamp && maySeeStamp(actor, stamp)) {
    const file = await deps.files.find(actor.tenantId, stamp.file_id);
    if (file) return file;
  }
  return (await loadUsableStamp(deps, actor, id)).file;
}
