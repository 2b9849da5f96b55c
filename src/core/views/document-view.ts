import type { Kysely } from 'kysely';
import type { Actor } from '../access/actor.js';
import { readJson } from '../../store/db/json.js';
import type { Database } from '../../store/db/schema.js';
import type { DocumentRow } from '../access/document-access.js';
import { waitingFor } from './share-view.js';
import type { CustomField } from '../documents/custom-fields.js';

export interface AttachmentView {
  content: string;
  documentname: string;
  mimetype: string;
  size: number;
  public: boolean;
  /** A submitted file: the signature field it answers (its `fieldId`, or `customId` on older shares). */
  field?: string;
}

/** A document as the API shows it (spec: Document; Contract: `waitingFor`). */
export interface DocumentView {
  documentId: string;
  documentTitle: string;
  documentType: string;
  definitionType: string | null;
  pdfFile?: { content: string; mimetype: string; size: number; pages?: number };
  file?: AttachmentView[];
  submittedFiles: AttachmentView[];
  customTemplate: string | null;
  customFields: CustomField[];
  barcode: string | null;
  _version: number;
  isSigned: boolean;
  workflow: { workflowType: string; shareStateName?: string };
  folder?: { global: { level: number; parentFolderId: string; name: string } };
  owner: string;
  createName: { id: string; name: string };
  createDate: string;
  modifyDate: string;
  waitingFor: string[];
}

/**
 * Shapes a document for an answer. Attachments (`file`) are shown only to callers holding
 * `view_attachments` (spec Authentication 7).
 */
export async function documentView(
  db: Kysely<Database>,
  actor: Actor,
  doc: DocumentRow,
): Promise<DocumentView> {
  const [main, attachments, folder, owner, creator, pending] = await Promise.all([
    doc.main_file_id
      ? db
          .selectFrom('files')
          .select(['id', 'mimetype', 'size', 'pages'])
          .where('id', '=', doc.main_file_id)
          .executeTakeFirst()
      : undefined,
    db
      .selectFrom('document_attachments as a')
      .innerJoin('files as f', 'f.id', 'a.file_id')
      .select(['f.id', 'f.name', 'f.mimetype', 'f.size', 'a.is_public', 'a.submitted', 'a.field_id'])
      .where('a.document_id', '=', doc.id)
      .orderBy('a.position')
      .execute(),
    doc.folder_id ? folderPath(db, doc.folder_id) : undefined,
    db.selectFrom('users').select(['name']).where('id', '=', doc.owner_id).executeTakeFirst(),
    db.selectFrom('users').select(['name']).where('id', '=', doc.created_by).executeTakeFirst(),
    waitingFor(db, doc.id),
  ]);
  const toView = (a: (typeof attachments)[number]): AttachmentView => ({
    content: a.id,
    documentname: a.name,
    mimetype: a.mimetype,
    size: Number(a.size),
    public: a.is_public === 1,
    ...(a.submitted === 1 && a.field_id !== null ? { field: a.field_id } : {}),
  });
  return {
    documentId: doc.id,
    documentTitle: doc.title,
    documentType: doc.document_type,
    definitionType: doc.definition_type,
    ...(main
      ? {
          pdfFile: {
            content: main.id,
            mimetype: main.mimetype,
            size: Number(main.size),
            ...(main.pages ? { pages: main.pages } : {}),
          },
        }
      : {}),
    ...(actor.rights.has('view_attachments')
      ? { file: attachments.filter((a) => a.submitted === 0).map(toView) }
      : {}),
    submittedFiles: attachments.filter((a) => a.submitted === 1).map(toView),
    customTemplate: doc.custom_template,
    customFields: readJson<CustomField[]>(doc.custom_fields, []),
    barcode: doc.barcode_file_id,
    _version: doc.version,
    isSigned: doc.is_signed === 1,
    workflow: { workflowType: doc.workflow, ...(doc.share_state ? { shareStateName: doc.share_state } : {}) },
    ...(folder ? { folder: { global: folder } } : {}),
    owner: owner?.name ?? doc.owner_id,
    createName: { id: doc.created_by, name: creator?.name ?? doc.created_by },
    createDate: doc.created_at,
    modifyDate: doc.updated_at,
    waitingFor: pending,
  };
}

/** `folder.global`: the containing folder, its id and its depth from the root (root-level folder = 1). */
async function folderPath(
  db: Kysely<Database>,
  folderId: string,
): Promise<{ level: number; parentFolderId: string; name: string } | undefined> {
  const folder = await db
    .selectFrom('documents')
    .select(['id', 'title', 'folder_id'])
    .where('id', '=', folderId)
    .executeTakeFirst();
  if (!folder) return undefined;
  let level = 1;
  let parent = folder.folder_id;
  while (parent && level < 64) {
    const next = await db
      .selectFrom('documents')
      .select('folder_id')
      .where('id', '=', parent)
      .executeTakeFirst();
    parent = next?.folder_id ?? null;
    level++;
  }
  return { level, parentFolderId: folder.id, name: folder.title };
}
