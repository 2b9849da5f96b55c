import type { Static } from 'typebox';
import type { EditDocumentBody } from './contract.js';
import type { Updateable } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { Forbidden, ValidationError } from '../base/errors.js';
import { writeJson } from '../store/db/json.js';
import type { DocumentTable } from '../store/db/schema.js';
import { canManage, loadEditable } from '../core/access/document-access.js';
import { changeDocument } from '../core/changes/change-document.js';
import { checkTypeAndFields } from './definitions/check-type-and-fields.js';
import { loadTargetFolder } from './document-input.js';
import { documentView, type DocumentView } from '../core/views/document-view.js';
import { writeTransaction } from '../store/db/dialect.js';
import { checkFileChanges } from './replace-document-files.js';

/**
 * The body of PUT /documents/edit/:version but its `id`: `folder` moves the document or folder there (null:
 * to the root); `isShared` (folders only) shares it with the organization, inherited by everything inside.
 */
export type MetadataChanges = Omit<Static<typeof EditDocumentBody>, 'id'>;

const MAX_DEPTH = 64;

/**
 * PUT /documents/edit/:version: changes a document's or folder's metadata and moves it between
 * folders; a document's attachments (`file`) and main file (`pdfFile`) change as in
 * PUT /documents/:version (spec Files, usage rule 7 names both calls). Compare-and-set on the version.
 * Changed custom fields keep what the document type's definition requires (check-type-and-fields.ts).
 */
export async function editDocument(
  deps: Deps,
  actor: Actor,
  options: { id: string; version: number; changes: MetadataChanges },
): Promise<DocumentView> {
  const { changes } = options;
  const doc = await loadEditable(deps.db, actor, options.id, deps.clock.now());
  if (changes.isShared !== undefined && doc.kind !== 'folder') {
    throw new ValidationError('isShared', 'is allowed for folders only');
  }
  // Where a document sits decides who else sees it (spec Folder): that stays with who manages it, not
  // with a user it is shared with for edit.
  if ((changes.folder !== undefined || changes.isShared !== undefined) && !canManage(actor, doc)) {
    throw new Forbidden('Only the owner or an administrator may move this document');
  }
  const set: Updateable<DocumentTable> = {};
  if (changes.documentTitle !== undefined) set.title = changes.documentTitle;
  const customFields = await checkTypeAndFields(deps, actor, doc, changes, {
    documentType: 'documentType',
    customFields: 'customFields',
  });
  if (customFields !== undefined) set.custom_fields = writeJson(customFields);
  if (changes.isShared !== undefined) set.is_shared = changes.isShared ? 1 : 0;
  if (changes.folder !== undefined) {
    if (changes.folder === null) set.folder_id = null;
    else {
      const target = await loadTargetFolder(deps, actor, changes.folder, 'folder');
      // A folder moved into itself or its own subfolder would detach a loop from the tree.
      let cursor: string | null = target.id;
      for (let depth = 0; cursor && depth < MAX_DEPTH; depth++) {
        if (cursor === doc.id) throw new ValidationError('folder', 'is inside the moved folder');
        const parent: { folder_id: string | null } | undefined = await deps.db
          .selectFrom('documents')
          .select('folder_id')
          .where('id', '=', cursor)
          .executeTakeFirst();
        cursor = parent?.folder_id ?? null;
      }
      set.folder_id = target.id;
    }
  }
  const fileChanges = await checkFileChanges(deps, actor, doc, changes);
  const now = deps.clock.now();
  const updated = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const { mainFileId } = await fileChanges.apply(trx, now);
    if (mainFileId) set.main_file_id = mainFileId;
    return changeDocument(trx, actor, {
      doc,
      expectedVersion: options.version,
      set,
      activityType: changes.folder !== undefined ? 'documentMoved' : 'documentEdited',
      event: doc.kind === 'document' ? 'documentEdited' : undefined,
      data: { fields: Object.keys(changes) },
      now,
    });
  });
  return documentView(deps.db, actor, updated);
}
