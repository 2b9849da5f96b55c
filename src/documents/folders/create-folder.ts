import { randomUUID } from 'node:crypto';
import type { Actor } from '../../core/access/actor.js';
import { recordAction } from '../../core/audit/record.js';
import type { Deps } from '../../core/deps.js';
import { Forbidden } from '../../base/errors.js';
import { loadTargetFolder } from '../document-input.js';
import { newDocumentRow } from '../new-document-row.js';
import { writeTransaction } from '../../store/db/dialect.js';

/**
 * POST /folders (spec Folder): a folder is a document of kind `folder`. `parentFolderId` null is the
 * root. A folder inside a shared folder is shared too (access is inherited, see core/access/document-access.ts),
 * whatever its own `isShared` says.
 */
export async function createFolder(
  deps: Deps,
  actor: Actor,
  options: { name: string; isShared: boolean; parentFolderId: string | null },
): Promise<{ id: string }> {
  if (!actor.rights.has('use_document_management')) {
    throw new Forbidden('Creating folders needs the right use_document_management');
  }
  const parent = options.parentFolderId
    ? await loadTargetFolder(deps, actor, options.parentFolderId, 'parentFolderId')
    : undefined;
  const id = randomUUID();
  const now = deps.clock.now();
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await trx
      .insertInto('documents')
      .values(
        newDocumentRow(actor, now, {
          id,
          organization_id: parent?.organization_id ?? actor.organizationId,
          kind: 'folder',
          title: options.name,
          document_type: 'folder',
          folder_id: parent?.id ?? null,
          is_shared: options.isShared ? 1 : 0,
        }),
      )
      .execute();
    await recordAction(trx, actor, {
      activityType: 'folderCreated',
      objectType: 'folder',
      objectId: id,
      data: { name: options.name, parent: parent?.id ?? null, isShared: options.isShared },
      at: now,
    });
  });
  return { id };
}
