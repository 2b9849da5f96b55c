import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { FileNotUsable, Forbidden, ValidationError } from '../base/errors.js';
import { FROM_SAVE_FILE } from '../core/changes/file-usage.js';
import { inspectStoredPdf } from '../core/files/stored-pdf.js';
import { canFileInto, canView, type DocumentRow } from '../core/access/document-access.js';

/**
 * Checks that a main file is a readable PDF before it is used (issue "Bad files": a non-PDF, a
 * truncated or garbage PDF and an encrypted PDF get a 400 naming the problem). Runs before the
 * transaction so no write lock is held while the file is read.
 */
export async function assertUsablePdf(
  deps: Deps,
  actor: Actor,
  fileId: string,
  field: string,
): Promise<number> {
  const file = await deps.files.find(actor.tenantId, fileId);
  if (!file || file.owner_id !== actor.userId)
    throw new FileNotUsable(`${field}: no such file among your uploads`);
  // The usage rules speak first: a file from the wrong endpoint is "not usable" whatever it holds.
  if (!(FROM_SAVE_FILE as readonly string[]).includes(file.kind)) {
    throw new FileNotUsable(`${field}: the file must be uploaded with POST /files/saveFile`);
  }
  const inspection = await inspectStoredPdf(deps, file);
  if (!inspection.ok) throw new ValidationError(`${field}: ${inspection.problem}`);
  return inspection.pages;
}

/**
 * spec Documents rule 4: placing a document in a folder needs rights on the folder. Whoever sees a
 * folder may add to it: its owner, administrators, and members of the organization it is shared with.
 */
export async function loadTargetFolder(
  deps: Deps,
  actor: Actor,
  folderId: string,
  field: string,
): Promise<DocumentRow> {
  const folder = await deps.db
    .selectFrom('documents')
    .selectAll()
    .where('id', '=', folderId)
    .where('kind', '=', 'folder')
    .executeTakeFirst();
  if (!folder || !(await canView(deps.db, actor, folder))) {
    throw new ValidationError(`${field}`, 'must name a folder you can see');
  }
  if (!(await canFileInto(deps.db, actor, folder, deps.clock.now()))) {
    throw new Forbidden(
      `The folder of "${field}" is shared with you for view: adding to it needs an edit share`,
    );
  }
  return folder;
}
