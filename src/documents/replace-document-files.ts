import type { Static } from 'typebox';
import type { UpdateDocumentBody } from './contract.js';
import type { Kysely } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { Forbidden, ValidationError } from '../base/errors.js';
import { claimFiles, FROM_SAVE_FILE, type FileUse } from '../core/changes/file-usage.js';
import type { Database } from '../store/db/schema.js';
import type { DocumentRow } from '../core/access/document-access.js';
import { assertAttachmentLimits } from '../core/documents/attachment-limits.js';
import { addRevision } from '../core/changes/change-document.js';
import { getProperties } from '../core/settings/tenant-settings.js';
import { assertUsablePdf } from './document-input.js';

/**
 * The file changes PUT /documents/:version and PUT /documents/edit/:version take (`body.file`,
 * `body.pdfFile`).
 */
// `pdfFile`: a new main file (external documents, before any signature); `file`: the whole attachment
// list (ids already attached stay, new ids are added, missing ones removed).
export type FileChanges = Pick<Static<typeof UpdateDocumentBody>['body'], 'pdfFile' | 'file'>;

/** A file change checked before the transaction, to apply in it. */
export interface CheckedFileChanges {
  /** Applies the change in the caller's transaction (replaceDocumentFiles): the id of a new main file. */
  apply(trx: Kysely<Database>, now: Date): Promise<{ mainFileId: string | undefined }>;
}

/**
 * PUT /documents/:version and PUT /documents/edit/:version: checks a file change before the
 * transaction (assertFileChangesAllowed) and reads the tenant's attachment limit it is applied under.
 *
 * ```ts
 * const fileChanges = await checkFileChanges(deps, actor, doc, changes);
 * await writeTransaction(deps.db, deps.dialect, async (trx) => {
 *   const { mainFileId } = await fileChanges.apply(trx, now);
 * });
 * ```
 */
export async function checkFileChanges(
  deps: Deps,
  actor: Actor,
  doc: DocumentRow,
  changes: FileChanges,
): Promise<CheckedFileChanges> {
  await assertFileChangesAllowed(deps, actor, doc, changes);
  const { dropZoneMaxSize } = await getProperties(deps, actor);
  return { apply: (trx, now) => replaceDocumentFiles(trx, actor, { doc, changes, now, dropZoneMaxSize }) };
}

/**
 * The checks of a file change that need no transaction (spec Files, usage rule 7): the right to
 * change attachments, a main file replaced only before any signature and only by a usable PDF.
 * Run before the transaction so a refused change costs no lock.
 */
async function assertFileChangesAllowed(
  deps: Deps,
  actor: Actor,
  doc: DocumentRow,
  changes: FileChanges,
): Promise<void> {
  if (!changes.file && !changes.pdfFile) return;
  if (doc.kind !== 'document') throw new ValidationError('id', 'must name a document');
  if (changes.file && !actor.rights.has('add_file_attachments')) {
    throw new Forbidden('Changing attachments needs the right add_file_attachments');
  }
  if (changes.pdfFile) {
    if (doc.is_signed === 1) {
      throw new ValidationError('body.pdfFile: the main file of a signed document cannot be replaced');
    }
    await assertUsablePdf(deps, actor, changes.pdfFile.content, 'body.pdfFile.content');
  }
}

/**
 * Applies a file change inside the caller's transaction (spec Files, usage rule 7): new files must
 * be unused or used only in a draft and are claimed for the document, a new main file becomes the
 * next revision, the attachment list is replaced and its limits checked. Returns the id of the new
 * main file, which the caller writes with its compare-and-set change (the transaction rolls all of
 * this back when the version does not match).
 */
async function replaceDocumentFiles(
  trx: Kysely<Database>,
  actor: Actor,
  options: { doc: DocumentRow; changes: FileChanges; now: Date; dropZoneMaxSize: number },
): Promise<{ mainFileId: string | undefined }> {
  const { doc, changes, now } = options;
  if (!changes.file && !changes.pdfFile) return { mainFileId: undefined };
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
  const newMain = claimed.get('body.pdfFile.content');
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
    assertAttachmentLimits(Number(after.n), Number(after.bytes), options.dropZoneMaxSize);
  }
  return { mainFileId: newMain?.id };
}
