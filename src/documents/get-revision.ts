import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { NotFound } from '../base/errors.js';
import { fileView, type FileView } from '../core/views/file-view.js';
import { loadVisible } from '../core/access/document-access.js';

export interface RevisionView {
  documentId: string;
  revision: number;
  reason: string;
  actor: string | null;
  createDate: string;
  pdfFile: FileView;
  /** Revisions there are of this document, so a client can walk them. */
  revisions: number;
}

/**
 * GET /revisions/document/{id}/{revision}: one kept version of the main file (1 = as created); its
 * bytes through GET /files/loadFile/hash/{pdfFile.id}.
 */
export async function getRevision(
  deps: Deps,
  actor: Actor,
  options: { id: string; revision: number },
): Promise<RevisionView> {
  const doc = await loadVisible(deps.db, actor, options.id);
  const rows = await deps.db
    .selectFrom('document_revisions as r')
    .innerJoin('files as f', 'f.id', 'r.file_id')
    .selectAll('f')
    .select(['r.revision', 'r.reason', 'r.actor_id', 'r.created_at as revision_at'])
    .where('r.document_id', '=', doc.id)
    .orderBy('r.revision')
    .execute();
  const row = rows.find((r) => r.revision === options.revision);
  if (!row) throw new NotFound('No such revision');
  return {
    documentId: doc.id,
    revision: row.revision,
    reason: row.reason,
    actor: row.actor_id,
    createDate: row.revision_at,
    pdfFile: fileView(row),
    revisions: rows.length,
  };
}
