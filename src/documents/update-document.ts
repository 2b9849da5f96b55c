import type { Static } from 'typebox';
import type { UpdateDocumentBody } from './contract.js';
import type { Updateable } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { ValidationError, VersionMismatch } from '../base/errors.js';
import { writeJson } from '../store/db/json.js';
import type { DocumentTable } from '../store/db/schema.js';
import { loadEditable } from '../core/access/document-access.js';
import { changeDocument } from '../core/changes/change-document.js';
import { checkTypeAndFields } from './definitions/check-type-and-fields.js';
import { documentView, type DocumentView } from '../core/views/document-view.js';
import { checkFileChanges } from './replace-document-files.js';
import {
  commitInCall,
  drawInCall,
  prepareVisualsInCall,
  type SigningOutcome,
  type VisualsInCall,
} from '../core/signing/signer-change.js';
import { writeTransaction } from '../store/db/dialect.js';

/** The `body` of PUT /documents/:version: the fields to change, a new main file, the attachment list. */
export type DocumentChanges = Static<typeof UpdateDocumentBody>['body'];

/**
 * PUT /documents/:version (spec Files usage rule 7): changes a document's data, its main file and its
 * attachments. New files must be unused or used only in a draft. Compare-and-set on the version.
 * With `signatures`, `images` or `annotations` (spec Files usage rule 3; DESIGN: Signing inside other
 * calls) the main file, the new one when `pdfFile` is given, is signed or annotated first, outside
 * any transaction, then committed with the change in one transaction, and the whole call counts as one change. A new `documentType` must be one the caller
 * may use, and the custom fields keep what the type's definition requires (check-type-and-fields.ts).
 */
export async function updateDocument(
  deps: Deps,
  actor: Actor,
  options: { id: string; version: number; changes: DocumentChanges; visuals?: VisualsInCall | undefined },
): Promise<{ document: DocumentView; signing: SigningOutcome | undefined }> {
  const { changes } = options;
  const doc = await loadEditable(deps.db, actor, options.id, deps.clock.now());
  if (doc.kind !== 'document') throw new ValidationError('id', 'must name a document');
  const customFields = await checkTypeAndFields(deps, actor, doc, changes, {
    documentType: 'body.documentType',
    customFields: 'body.customFields',
  });
  const fileChanges = await checkFileChanges(deps, actor, doc, changes);
  const visuals = await prepareVisualsInCall(deps, actor, options.visuals);
  // Fail fast, before the PDF work; the compare-and-set in the transaction is what decides.
  if (visuals && doc.version !== options.version) throw new VersionMismatch();
  // A call that only signs is not also an edit (no `documentEdited` with nothing in it).
  const edits = Object.keys(changes).length > 0 || !visuals;
  const now = deps.clock.now();
  // DESIGN: remote calls never run inside a database transaction. The main file the call leaves (the
  // new `pdfFile`, else the current one) is drawn on and signed first; the transaction only writes.
  const drawn =
    visuals &&
    (await drawInCall(deps, actor, visuals, {
      document: { ...doc, title: changes.documentTitle ?? doc.title },
      fileId: changes.pdfFile?.content ?? doc.main_file_id,
      now,
    }));
  const updated = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const { mainFileId } = await fileChanges.apply(trx, now);
    const set: Updateable<DocumentTable> = {};
    if (changes.documentTitle !== undefined) set.title = changes.documentTitle;
    if (changes.documentType !== undefined) set.document_type = changes.documentType;
    if (customFields !== undefined) set.custom_fields = writeJson(customFields);
    if (mainFileId) set.main_file_id = mainFileId;
    const saved = edits
      ? await changeDocument(trx, actor, {
          doc,
          expectedVersion: options.version,
          set,
          activityType: 'documentEdited',
          event: 'documentEdited',
          data: { fields: Object.keys(changes) },
          now,
        })
      : doc;
    if (!drawn) return { doc: saved, signing: undefined };
    return commitInCall(trx, deps, {
      actor,
      doc: saved,
      drawn,
      expectedVersion: edits ? saved.version : options.version,
      bumpVersion: !edits,
      now,
    });
  });
  return { document: await documentView(deps.db, actor, updated.doc), signing: updated.signing };
}
