import type { Actor } from '../../core/access/actor.js';
import type { Deps } from '../../core/deps.js';
import { NotFound } from '../../base/errors.js';
import { canView, isEffectivelyShared, loadVisible } from '../../core/access/document-access.js';

export interface FolderItem {
  id: string;
  kind: 'document' | 'folder';
  name: string;
  _version: number;
  isShared?: boolean;
  modifyDate: string;
}

/**
 * GET /folders/:id: the folder and what inside it the caller may see (`root` lists the caller's top
 * level). `isShared` is the setting in force, inherited from the outermost folder (spec Folder).
 */
export async function getFolder(
  deps: Deps,
  actor: Actor,
  id: string,
): Promise<{
  id: string | null;
  name: string;
  isShared: boolean;
  parentFolderId: string | null;
  _version: number | null;
  items: FolderItem[];
}> {
  const folder = id === 'root' ? undefined : await loadVisible(deps.db, actor, id);
  if (folder && folder.kind !== 'folder') throw new NotFound('No such folder');
  let query = deps.db
    .selectFrom('documents')
    .selectAll()
    .where('tenant_id', '=', actor.tenantId)
    .where('deleted_at', 'is', null);
  query = folder ? query.where('folder_id', '=', folder.id) : query.where('folder_id', 'is', null);
  const rows = await query.orderBy('kind', 'desc').orderBy('title').limit(1000).execute();
  // spec Folder: what sits in a folder shares its setting; at the root a folder's own setting counts.
  const shared = folder ? await isEffectivelyShared(deps.db, folder) : undefined;
  const items: FolderItem[] = [];
  for (const row of rows) {
    if (!(await canView(deps.db, actor, row))) continue;
    items.push({
      id: row.id,
      kind: row.kind,
      name: row.title,
      _version: row.version,
      ...(row.kind === 'folder' ? { isShared: shared ?? row.is_shared === 1 } : {}),
      modifyDate: row.updated_at,
    });
  }
  return {
    id: folder?.id ?? null,
    name: folder?.title ?? '',
    isShared: shared ?? false,
    parentFolderId: folder?.folder_id ?? null,
    _version: folder?.version ?? null,
    items,
  };
}
