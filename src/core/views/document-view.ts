import { sql, type Expression, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { Actor } from '../access/actor.js';
import { dialectOf } from '../../store/db/dialect.js';
import { readJson } from '../../store/db/json.js';
import { QueryTemplate } from '../../store/db/query-template.js';
import type {
  Database,
  DocumentAttachmentTable,
  DocumentTable,
  FileTable,
  Json,
} from '../../store/db/schema.js';
import type { DocumentRow } from '../access/document-access.js';
import { NotFound } from '../../base/errors.js';
import { PENDING, type ShareRow } from '../sharing/share-types.js';
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

/** The columns of a document's row that its view shows (`shapeDocument`). */
export const SHOWN_COLUMNS = [
  'id',
  'title',
  'document_type',
  'definition_type',
  'custom_template',
  'custom_fields',
  'barcode_file_id',
  'version',
  'is_signed',
  'workflow',
  'share_state',
  'folder_id',
  'owner_id',
  'created_by',
  'created_at',
  'updated_at',
  'main_file_id',
] as const satisfies readonly (keyof DocumentTable)[];

/** A document's row as far as its view shows it. */
export type ShownDocument = Pick<DocumentRow, (typeof SHOWN_COLUMNS)[number]>;

/** `folder.global.level` counts from the root folder (1) up to this many levels. */
const MAX_FOLDER_LEVEL = 64;

/**
 * What a document's view shows beside its row, added to a query of `documents as d` as left joins
 * (its main file, owner, creator and folder) and subqueries correlated to `d` (its attachments and
 * pending shares, as JSON lists in their order, and its folder's depth): one statement reads a
 * document with all it shows, or a whole page of search results. Shape the row with `shapeDocument`.
 */
export function withViewParts<O>(
  db: Kysely<Database>,
  query: SelectQueryBuilder<Database & { d: DocumentTable }, 'd', O>,
) {
  const dialect = dialectOf(db);
  return query
    .leftJoin('files as main', 'main.id', 'd.main_file_id')
    .select(['main.id as main_id', 'main.mimetype as main_mimetype', 'main.size as main_size'])
    .select('main.pages as main_pages')
    .leftJoin('documents as folder', 'folder.id', 'd.folder_id')
    .select([
      'folder.title as folder_title',
      folderLevel(db, sql.ref<string | null>('d.folder_id')).as('folder_level'),
    ])
    .leftJoin('users as owner', 'owner.id', 'd.owner_id')
    .leftJoin('users as creator', 'creator.id', 'd.created_by')
    .select([
      'owner.name as owner_name',
      'creator.name as creator_name',
      dialect
        .jsonArrayFrom(
          db
            .selectFrom('document_attachments as a')
            .innerJoin('files as f', 'f.id', 'a.file_id')
            .select(['f.id', 'f.name', 'f.mimetype', 'f.size', 'a.is_public', 'a.submitted', 'a.field_id'])
            .whereRef('a.document_id', '=', sql.ref('d.id'))
            .orderBy('a.position'),
        )
        .as('attachments'),
      dialect
        .jsonArrayFrom(
          db
            .selectFrom('shares as s')
            .select(['s.share_to', 's.purpose', 's.options'])
            .whereRef('s.document_id', '=', sql.ref('d.id'))
            .where('s.status', 'in', PENDING)
            .orderBy('s.position')
            .orderBy('s.created_at'),
        )
        .as('pending'),
    ]);
}

/** What `withViewParts` adds to a document's row. */
export interface ViewParts {
  main_id: string | null;
  main_mimetype: string | null;
  main_size: number | null;
  main_pages: number | null;
  owner_name: string | null;
  creator_name: string | null;
  folder_title: string | null;
  folder_level: number | null;
  attachments: Json;
  pending: Json;
}

type AttachmentRow = Pick<FileTable, 'id' | 'name' | 'mimetype' | 'size'> &
  Pick<DocumentAttachmentTable, 'is_public' | 'submitted' | 'field_id'>;

/**
 * The depth of the folder `folderId` (a column of the outer query) from the root, the root-level
 * folder being 1: its chain of parents, deleted or not, as far as MAX_FOLDER_LEVEL. A parent that
 * no longer exists still counts, as the folder names it.
 */
function folderLevel(db: Kysely<Database>, folderId: Expression<string | null>) {
  return db
    .withRecursive('chain(folder_id, level)', (qb) =>
      qb
        .selectFrom('documents')
        .select(['folder_id', sql<number>`1`.as('level')])
        .where('id', '=', folderId)
        .unionAll((step) =>
          step
            .selectFrom('chain')
            .innerJoin('documents as parent', 'parent.id', 'chain.folder_id')
            .select(['parent.folder_id', sql<number>`${sql.ref('chain.level')} + 1`.as('level')])
            .where('chain.level', '<', MAX_FOLDER_LEVEL),
        ),
    )
    .selectFrom('chain')
    .select(
      sql<number>`max(${sql.ref('chain.level')} + case when ${sql.ref('chain.folder_id')} is not null and ${sql.ref('chain.level')} < ${sql.lit(MAX_FOLDER_LEVEL)} then 1 else 0 end)`.as(
        'level',
      ),
    );
}

/**
 * Shapes a document for an answer, from its row read `withViewParts`. Attachments (`file`) are shown
 * only to callers holding `view_attachments` (spec Authentication 7).
 */
export function shapeDocument(actor: Actor, doc: ShownDocument, parts: ViewParts): DocumentView {
  const attachments = readJson<AttachmentRow[]>(parts.attachments, []);
  const pending = readJson<Pick<ShareRow, 'share_to' | 'purpose' | 'options'>[]>(parts.pending, []);
  const toView = (a: AttachmentRow): AttachmentView => ({
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
    ...(parts.main_id !== null
      ? {
          pdfFile: {
            content: parts.main_id,
            mimetype: parts.main_mimetype ?? '',
            size: Number(parts.main_size),
            ...(parts.main_pages ? { pages: parts.main_pages } : {}),
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
    ...(doc.folder_id !== null && parts.folder_title !== null
      ? {
          folder: {
            global: {
              level: parts.folder_level ?? 1,
              parentFolderId: doc.folder_id,
              name: parts.folder_title,
            },
          },
        }
      : {}),
    owner: parts.owner_name ?? doc.owner_id,
    createName: { id: doc.created_by, name: parts.creator_name ?? doc.created_by },
    createDate: doc.created_at,
    modifyDate: doc.updated_at,
    waitingFor: waitingFor(pending),
  };
}

const partsOfOne = new QueryTemplate((db, p: { id: string }) =>
  withViewParts(db, db.selectFrom('documents as d')).where('d.id', '=', p.id),
);

/** Shapes a document for an answer: one statement reads what it shows beside its row. */
export async function documentView(
  db: Kysely<Database>,
  actor: Actor,
  doc: DocumentRow,
): Promise<DocumentView> {
  const [parts] = await partsOfOne.execute(db, { id: doc.id });
  if (!parts) throw new NotFound('No such document');
  return shapeDocument(actor, doc, parts);
}
