import type { Static } from 'typebox';
import type { MergeBody } from './contract.js';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { ValidationError } from '../base/errors.js';
import { claimFiles, FROM_SAVE_FILE } from '../core/changes/file-usage.js';
import { inspectPdf } from '../pdf/inspect-pdf.js';
import { mergePdfs } from '../pdf/merge-pdfs.js';
import { loadEditable } from '../core/access/document-access.js';
import { addRevision, changeDocument } from '../core/changes/change-document.js';
import { assertUsablePdf } from './document-input.js';
import { documentView, type DocumentView } from '../core/views/document-view.js';
import { writeTransaction } from '../store/db/dialect.js';

/**
 * PUT /documents/{id}/merge: appends PDFs to the main file, which gets a new id (the old one stays as
 * a revision). Refused once the document is signed: merging rewrites the file and would break
 * signatures (DESIGN lessons). The merged files are used up like any other (usage rules).
 */
export async function mergeDocument(
  deps: Deps,
  actor: Actor,
  options: { id: string } & Static<typeof MergeBody>,
): Promise<DocumentView> {
  const doc = await loadEditable(deps.db, actor, options.id, deps.clock.now());
  if (doc.is_signed === 1)
    throw new ValidationError('A signed document cannot be merged: its signatures would break');
  if (!doc.main_file_id) throw new ValidationError('The document has no main file to merge into');
  for (const [i, id] of options.files.entries()) await assertUsablePdf(deps, actor, id, `files[${i}]`);
  const main = await deps.files.find(actor.tenantId, doc.main_file_id);
  if (!main) throw new ValidationError('The document’s main file is missing');
  const sources = [await deps.files.read(main)];
  for (const id of options.files) {
    const file = await deps.files.find(actor.tenantId, id);
    if (file) sources.push(await deps.files.read(file));
  }
  const merged = await mergePdfs(sources);
  // The new main file is counted like an upload (its `pages` in every File record and view).
  const inspection = await inspectPdf(merged);
  const saved = await deps.files.save(Buffer.from(merged), {
    tenantId: actor.tenantId,
    organizationId: doc.organization_id,
    ownerId: doc.owner_id,
    name: main.name,
    mimetype: 'application/pdf',
    kind: 'merged',
    pages: inspection.ok ? inspection.pages : null,
  });
  const now = deps.clock.now();
  const updated = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await claimFiles(
      trx,
      actor,
      options.files.map((fileId, i) => ({ fileId, field: `files[${i}]`, kinds: FROM_SAVE_FILE })),
      `document:${doc.id}`,
      now,
    );
    await trx
      .updateTable('files')
      .set({ used_by: `document:${doc.id}`, used_at: now.toISOString() })
      .where('id', '=', saved.id)
      .execute();
    const changed = await changeDocument(trx, actor, {
      doc,
      expectedVersion: options.version,
      set: { main_file_id: saved.id },
      activityType: 'documentMerged',
      event: 'documentEdited',
      data: { merged: options.files },
      now,
    });
    await addRevision(trx, {
      documentId: doc.id,
      fileId: saved.id,
      reason: 'merged',
      actor: actor.name,
      now,
    });
    return changed;
  });
  return documentView(deps.db, actor, updated);
}
