import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { Forbidden, LimitExceeded } from '../base/errors.js';
import { claimFiles, FROM_SAVE_FILE, type FileUse } from '../core/changes/file-usage.js';
import { getProperties } from '../core/settings/tenant-settings.js';
import { writeJson } from '../store/db/json.js';
import type { Database } from '../store/db/schema.js';
import { emitEvent } from '../core/events/emit-event.js';
import type { DocumentRow } from '../core/access/document-access.js';
import { assertAttachmentLimits } from '../core/documents/attachment-limits.js';
import { addRevision } from '../core/changes/change-document.js';
import { barcodePng } from './barcode.js';
import {
  normalizeCustomFields,
  type CustomField,
  type CustomFieldInput,
} from '../core/documents/custom-fields.js';
import { assertWorkflowExists, DEFAULT_WORKFLOW } from './definitions/defaults.js';
import { loadUsableDefinition } from '../core/documents/definition-access.js';
import { assertDefinitionFields } from '../core/documents/definition-fields.js';
import { assertUsablePdf, loadTargetFolder } from './document-input.js';
import { newDocumentRow } from './new-document-row.js';
import { documentView, type DocumentView } from '../core/views/document-view.js';
import {
  commitInCall,
  drawInCall,
  prepareVisualsInCall,
  type PreparedChange,
  type PreparedVisuals,
  type SigningOutcome,
  type VisualsInCall,
} from '../core/signing/signer-change.js';
import { writeTransaction } from '../store/db/dialect.js';

export interface NewDocument {
  documentTitle: string;
  documentType: string;
  definitionType?: string | undefined;
  workflow?: string | undefined;
  pdfFile?: { content: string; mimetype?: string | undefined } | undefined;
  file?: { content: string; public?: boolean | undefined }[] | undefined;
  customTemplate?: string | undefined;
  customFields?: CustomFieldInput[] | undefined;
  folder?: string | undefined;
  cloneMainFile?: boolean | undefined;
  cloneFiles?: boolean | undefined;
  /** `optionalData.signatures`, `images`, `annotations` (and `level`): signed or annotated at creation. */
  visuals?: VisualsInCall | undefined;
}

export interface CreatedDocument {
  document: DocumentView;
  /** How the signature made at creation came out; absent when nothing was signed. */
  signing?: SigningOutcome | undefined;
}

const BULK_LIMIT = 100;

interface Prepared {
  id: string;
  input: NewDocument;
  /** Where the document's fields sit in the request, for error messages. */
  at: string;
  folder: DocumentRow | undefined;
  customFields: CustomField[];
  barcode: Buffer;
  visuals: PreparedVisuals | undefined;
}

/**
 * POST /documents and POST /documents/bulk/create (spec Documents; Files usage rule 8): creates
 * documents with their main file, attachments and barcode, all in one transaction with their audit
 * records and `documentCreated` events. Bulk: at most 100, all or none. The caller needs rights on
 * the document type and on the folder (spec Documents rule 4), and the custom fields hold what the
 * type's definition requires (issue 24, item 14).
 */
export async function createDocuments(
  deps: Deps,
  actor: Actor,
  inputs: NewDocument[],
): Promise<DocumentView[]> {
  return (await create(deps, actor, inputs)).map((created) => created.document);
}

/**
 * POST /documents with `optionalData.signatures`, `images` or `annotations` (spec Files usage rule 3;
 * DESIGN: Signing inside other calls): the document is created and signed (or annotated) as one
 * change: drawn and signed first, then written in one transaction. Revision 1 is the file as uploaded, revision 2 the signed one; `_version`
 * stays 1. A failure leaves no document and no file used up.
 */
export async function createDocument(deps: Deps, actor: Actor, input: NewDocument): Promise<CreatedDocument> {
  const [created] = await create(deps, actor, [input]);
  if (!created) throw new Error('one document in, one out');
  return created;
}

async function create(deps: Deps, actor: Actor, inputs: NewDocument[]): Promise<CreatedDocument[]> {
  if (!actor.rights.has('use_document_management')) {
    throw new Forbidden('Creating documents needs the right use_document_management');
  }
  if (inputs.length > BULK_LIMIT) throw new LimitExceeded(`At most ${BULK_LIMIT} documents per request`);
  const prefix = inputs.length > 1 ? 'bulkFiles' : 'body';
  const prepared: Prepared[] = [];
  for (const [i, input] of inputs.entries()) {
    const at = inputs.length > 1 ? `${prefix}[${i}]` : prefix;
    if ((input.file?.length ?? 0) > 0 && !actor.rights.has('add_file_attachments')) {
      throw new Forbidden('Adding attachments needs the right add_file_attachments');
    }
    // The type and the custom fields are in `body` in both calls (bulk: common to every document).
    const definition = await loadUsableDefinition(deps.db, actor, input.documentType, 'body.documentType');
    const customFields = normalizeCustomFields(input.customFields ?? [], 'body.customFields');
    assertDefinitionFields(definition, customFields, 'body.customFields');
    await assertWorkflowExists(deps.db, actor.tenantId, input.workflow ?? DEFAULT_WORKFLOW, 'workflow');
    // spec Documents rule 4: "the caller needs rights on both folder and document type".
    const folder = input.folder
      ? await loadTargetFolder(deps, actor, input.folder, 'optionalData.folder')
      : undefined;
    if (input.pdfFile) await assertUsablePdf(deps, actor, input.pdfFile.content, `${at}.pdfFile.content`);
    const id = randomUUID();
    prepared.push({
      id,
      input,
      at,
      folder,
      customFields,
      barcode: await barcodePng(deps.config, id),
      visuals: await prepareVisualsInCall(deps, actor, input.visuals, 'optionalData.'),
    });
  }
  const properties = await getProperties(deps, actor);
  const now = deps.clock.now();
  const barcodes = await Promise.all(
    prepared.map((p) =>
      deps.files.save(p.barcode, {
        tenantId: actor.tenantId,
        organizationId: actor.organizationId,
        ownerId: actor.userId,
        name: 'barcode.png',
        mimetype: 'image/png',
        kind: 'barcode',
      }),
    ),
  );
  // DESIGN: remote calls never run inside a database transaction. Each document's visuals are drawn
  // on its upload and signed first, with no transaction open; the transaction then only writes.
  const drawn: (PreparedChange | undefined)[] = [];
  for (const [i, p] of prepared.entries()) {
    drawn.push(
      p.visuals &&
        (await drawInCall(deps, actor, p.visuals, {
          document: { id: p.id, title: p.input.documentTitle, barcode_file_id: barcodes[i]?.id ?? null },
          fileId: p.input.pdfFile?.content ?? null,
          now,
        })),
    );
  }
  const rows = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const created: { row: DocumentRow; signing: SigningOutcome | undefined }[] = [];
    for (const [i, p] of prepared.entries()) {
      const barcode = barcodes[i];
      if (!barcode) throw new Error('barcode missing');
      const row = await insertDocument(trx, actor, p, barcode.id, properties.dropZoneMaxSize, now);
      const change = drawn[i];
      if (!change) {
        created.push({ row, signing: undefined });
        continue;
      }
      // spec Files usage rule 3: signed at creation, as part of the same change.
      const signed = await commitInCall(trx, deps, {
        actor,
        doc: row,
        drawn: change,
        expectedVersion: row.version,
        bumpVersion: false,
        now,
      });
      created.push({ row: signed.doc, signing: signed.signing });
    }
    return created;
  });
  return Promise.all(
    rows.map(async ({ row, signing }) => ({
      document: await documentView(deps.db, actor, row),
      ...(signing ? { signing } : {}),
    })),
  );
}

async function insertDocument(
  trx: Kysely<Database>,
  actor: Actor,
  p: Prepared,
  barcodeId: string,
  dropZoneMaxSize: number,
  now: Date,
): Promise<DocumentRow> {
  const { id, input, at } = p;
  const usedBy = `document:${id}`;
  const uses: FileUse[] = [];
  if (input.pdfFile) {
    uses.push({
      fileId: input.pdfFile.content,
      field: `${at}.pdfFile.content`,
      kinds: FROM_SAVE_FILE,
      clone: input.cloneMainFile,
    });
  }
  for (const [n, attachment] of (input.file ?? []).entries()) {
    uses.push({
      fileId: attachment.content,
      field: `${at}.file[${n}].content`,
      kinds: FROM_SAVE_FILE,
      clone: input.cloneFiles,
    });
  }
  const files = await claimFiles(trx, actor, uses, usedBy, now);
  const attachments = (input.file ?? []).map((a, n) => ({
    ...a,
    record: files.get(`${at}.file[${n}].content`),
  }));
  assertAttachmentLimits(
    attachments.length,
    attachments.reduce((sum, a) => sum + Number(a.record?.size ?? 0), 0),
    dropZoneMaxSize,
  );
  const main = input.pdfFile ? files.get(`${at}.pdfFile.content`) : undefined;
  await trx
    .updateTable('files')
    .set({ used_by: usedBy, used_at: now.toISOString() })
    .where('id', '=', barcodeId)
    .execute();
  const row = newDocumentRow(actor, now, {
    id,
    kind: 'document',
    title: input.documentTitle,
    document_type: input.documentType,
    definition_type: input.definitionType ?? null,
    workflow: input.workflow ?? DEFAULT_WORKFLOW,
    main_file_id: main?.id ?? null,
    barcode_file_id: barcodeId,
    custom_template: input.customTemplate ?? null,
    custom_fields: writeJson(p.customFields),
    folder_id: p.folder?.id ?? null,
  });
  await trx.insertInto('documents').values(row).execute();
  if (main)
    await addRevision(trx, { documentId: id, fileId: main.id, reason: 'created', actor: actor.name, now });
  for (const [position, attachment] of attachments.entries()) {
    if (!attachment.record) continue;
    await trx
      .insertInto('document_attachments')
      .values({
        document_id: id,
        file_id: attachment.record.id,
        is_public: attachment.public ? 1 : 0,
        submitted: 0,
        position,
        added_by: actor.userId,
        created_at: now.toISOString(),
      })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
  await recordAction(trx, actor, {
    activityType: 'documentCreated',
    objectType: 'document',
    objectId: id,
    data: { title: input.documentTitle, mainFile: main?.id ?? null },
    at: now,
  });
  await emitEvent(trx, {
    tenantId: actor.tenantId,
    organizationId: actor.organizationId,
    documentId: id,
    event: 'documentCreated',
    actor: actor.name,
    at: now,
    requestId: actor.requestId,
  });
  return row;
}
