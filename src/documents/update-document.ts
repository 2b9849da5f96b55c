import type { Updateable } from 'kysely';
import type { Actor } from '../auth/actor.js';
import type { Deps } from '../deps.js';
import { Forbidden, ValidationError, VersionMismatch } from '../errors.js';
import { claimFiles, FROM_SAVE_FILE, type FileUse } from '../files/file-usage.js';
import { getProperties } from '../settings/tenant-settings.js';
import { writeJson } from '../store/db/json.js';
import type { DocumentTable } from '../store/db/schema.js';
import { loadEditable } from './access.js';
import { assertAttachmentLimits } from './attachment-limits.js';
import { addRevision, changeDocument } from './change-document.js';
import { normalizeCustomFields, type CustomFieldInput } from './custom-fields.js';
import { assertDefinitionExists } from './definitions.js';
import { assertUsablePdf } from './document-input.js';
import { documentView, type DocumentView } from './document-view.js';
import {
  applyVisualsInCall,
  prepareVisualsInCall,
  type SigningInCall,
  type VisualsInCall,
} from '../signing/sign-in-call.js';
import { writeTransaction } from '../store/db/dialect.js';

export interface DocumentChanges {
  documentTitle?: string | undefined;
  documentType?: string | undefined;
  customFields?: CustomFieldInput[] | undefined;
  /** A new main file (external documents, before any signature). */
  pdfFile?: { content: string } | undefined;
  /** The whole attachment list: ids already attached stay, new ids are added, missing ones removed. */
  file?: { content: string; public?: boolean | undefined }[] | undefined;
}

/**
 * PUT /documents/:version (spec Files usage rule 7): changes a document's data, its main file and its
 * attachments. New files must be unused or used only in a draft. Compare-and-set on the version.
 * With `signatures`, `images` or `annotations` (spec Files usage rule 3; DESIGN: Signing inside other
 * calls) the main file, the new one when `pdfFile` is given, is then signed or annotated in the same
 * transaction, and the whole call counts as one change.
 */
export async function updateDocument(
  deps: Deps,
  actor: Actor,
  options: { id: string; version: number; changes: DocumentChanges; visuals?: VisualsInCall | undefined },
): Promise<{ document: DocumentView; signing: SigningInCall | undefined }> {
  const { changes } = options;
  const doc = await loadEditable(deps.db, actor, options.id);
  if (doc.kind !== 'document') throw new ValidationError('id', 'must name a document');
  if (changes.file && !actor.rights.has('add_file_attachments')) {
    throw new Forbidden('Changing attachments needs the right add_file_attachments');
  }
  if (changes.documentType)
    await assertDefinitionExists(deps.db, actor.tenantId, changes.documentType, 'body.documentType');
  if (changes.pdfFile) {
    if (doc.is_signed === 1) {
      throw new ValidationError('body.pdfFile: the main file of a signed document cannot be replaced');
    }
    await assertUsablePdf(deps, actor, changes.pdfFile.content, 'body.pdfFile.content');
  }
  const visuals = await prepareVisualsInCall(deps, actor, options.visuals);
  // Fail fast, before the PDF work; the compare-and-set in the transaction is what decides.
  if (visuals && doc.version !== options.version) throw new VersionMismatch();
  // A call that only signs is not also an edit (no `documentEdited` with nothing in it).
  const edits = Object.keys(changes).length > 0 || !visuals;
  const properties = await getProperties(deps, actor);
  const now = deps.clock.now();
  const updated = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const current = await trx
      .selectFrom('document_attachments')
      .selectAll()
      .where('document_id', '=', doc.id)
      .where('submitted', '=', 0)
      .execute();
    const currentIds = new Set(current.map((a) => a.file_id));
    const uses: FileUse[] = [];
    if (changes.pdfFile && changes.pdfFile.content !== doc.main_file_id) {
      uses.push({ fileId: changes.pdfFile.content, field: 'body.pdfFile.content', kinds: FROM_SAVE_FILE });
    }
    const added = (changes.file ?? []).filter((a) => !currentIds.has(a.content));
    for (const [n, a] of (changes.file ?? []).entries()) {
      if (!currentIds.has(a.content))
        uses.push({ fileId: a.content, field: `body.file[${n}].content`, kinds: FROM_SAVE_FILE });
    }
    const claimed = await claimFiles(trx, actor, uses, `document:${doc.id}`, now);

    const set: Updateable<DocumentTable> = {};
    if (changes.documentTitle !== undefined) set.title = changes.documentTitle;
    if (changes.documentType !== undefined) set.document_type = changes.documentType;
    if (changes.customFields !== undefined)
      set.custom_fields = writeJson(normalizeCustomFields(changes.customFields));
    const newMain = claimed.get('body.pdfFile.content');
    if (newMain) set.main_file_id = newMain.id;
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
    if (newMain)
      await addRevision(trx, {
        documentId: doc.id,
        fileId: newMain.id,
        reason: 'replaced',
        actor: actor.name,
        now,
      });

    if (changes.file) {
      const wanted = new Map(changes.file.map((a, position) => [a.content, { ...a, position }]));
      for (const a of current) {
        const want = wanted.get(a.file_id);
        if (!want) {
          await trx
            .deleteFrom('document_attachments')
            .where('document_id', '=', doc.id)
            .where('file_id', '=', a.file_id)
            .execute();
        } else {
          await trx
            .updateTable('document_attachments')
            .set({ is_public: want.public ? 1 : 0, position: want.position })
            .where('document_id', '=', doc.id)
            .where('file_id', '=', a.file_id)
            .execute();
        }
      }
      for (const a of added) {
        await trx
          .insertInto('document_attachments')
          .values({
            document_id: doc.id,
            file_id: a.content,
            is_public: a.public ? 1 : 0,
            submitted: 0,
            position: wanted.get(a.content)?.position ?? 0,
            added_by: actor.userId,
            created_at: now.toISOString(),
          })
          .onConflict((oc) => oc.doNothing())
          .execute();
      }
      const after = await trx
        .selectFrom('document_attachments as a')
        .innerJoin('files as f', 'f.id', 'a.file_id')
        .select((eb) => [
          eb.fn.countAll<number>().as('n'),
          eb.fn.coalesce(eb.fn.sum<number>('f.size'), eb.lit(0)).as('bytes'),
        ])
        .where('a.document_id', '=', doc.id)
        .where('a.submitted', '=', 0)
        .executeTakeFirstOrThrow();
      assertAttachmentLimits(Number(after.n), Number(after.bytes), properties.dropZoneMaxSize);
    }
    if (!visuals) return { doc: saved, signing: undefined };
    return applyVisualsInCall(trx, deps, {
      actor,
      doc: saved,
      prepared: visuals,
      expectedVersion: edits ? saved.version : options.version,
      bumpVersion: !edits,
      now,
    });
  });
  return { document: await documentView(deps.db, actor, updated.doc), signing: updated.signing };
}
