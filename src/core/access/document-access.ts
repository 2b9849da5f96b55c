import {
  sql,
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type Selectable,
  type SelectQueryBuilder,
  type SqlBool,
} from 'kysely';
import type { Actor } from './actor.js';
import { Forbidden, NotFound } from '../../base/errors.js';
import type { Database, DocumentTable } from '../../store/db/schema.js';
import { QueryTemplate } from '../../store/db/query-template.js';
import { isAdmin, isTenantWide } from './roles.js';

export type DocumentRow = Selectable<DocumentTable>;

// Folders nest; a loop (never written by us, but cheap to guard) must not hang a request.
const MAX_FOLDER_DEPTH = 64;

/** The columns of a document's row that `canView` reads. */
export const VISIBILITY_COLUMNS = [
  'tenant_id',
  'organization_id',
  'deleted_at',
  'owner_id',
  'created_by',
  'folder_id',
  'kind',
  'is_shared',
] as const satisfies readonly (keyof DocumentTable)[];

type VisibilityRow = Pick<DocumentRow, (typeof VISIBILITY_COLUMNS)[number]>;

function administers(actor: Actor, doc: Pick<DocumentRow, 'organization_id'>): boolean {
  return isAdmin(actor.role) && (isTenantWide(actor.role) || doc.organization_id === actor.organizationId);
}

/**
 * Who manages a document: the owner, or an administrator of the document's organization. They delete,
 * share, move, transfer and seal it and read its audit trail. Members see the content of shared
 * folders and may add to them, but manage only what they own.
 */
export function canManage(actor: Actor, doc: DocumentRow): boolean {
  return doc.tenant_id === actor.tenantId && (doc.owner_id === actor.userId || administers(actor, doc));
}

/**
 * Edit permission, spec Sharing: "view = read-only, edit = edit rights". Who manages the document, and
 * a user it is shared with for `edit` while that share lasts (active, its `validUntil` not passed):
 * they change its data, files and attachments, annotate it and sign it. The rest stays with who
 * manages it (`canManage`).
 */
export async function canEdit(
  db: Kysely<Database>,
  actor: Actor,
  doc: DocumentRow,
  now: Date,
): Promise<boolean> {
  if (canManage(actor, doc)) return true;
  if (doc.tenant_id !== actor.tenantId || doc.deleted_at !== null) return false;
  // An edit share owes no action, so it is never waiting for a turn: active until it ends. A folder
  // shared for edit passes it on to everything in it (spec Folder: "Access is inherited").
  const shares = await db
    .selectFrom('shares')
    .select('valid_until')
    .where((eb) =>
      eb.or([
        eb('document_id', '=', doc.id),
        ...(doc.folder_id === null ? [] : [eb('document_id', 'in', folderChain(db, sql.val(doc.folder_id)))]),
      ]),
    )
    .where((eb) => eb.or([eb('user_id', '=', actor.userId), eb('group_id', '=', actor.organizationId)]))
    .where('purpose', '=', 'edit')
    .where('status', '=', 'active')
    .execute();
  return shares.some((s) => s.valid_until === null || new Date(s.valid_until) > now);
}

/**
 * Whether the caller may put documents and folders into `folder`: who may edit it (its managers, a
 * user it is shared with for edit, directly or through a folder above), and the members of the
 * organization its shared tree is open to. A folder shared with a user for `view` is read-only to them.
 */
export async function canFileInto(
  db: Kysely<Database>,
  actor: Actor,
  folder: DocumentRow,
  now: Date,
): Promise<boolean> {
  if (seenByRow(actor, folder) === true) return true;
  if (folder.tenant_id !== actor.tenantId || folder.deleted_at !== null) return false;
  const facts = await visibilityFacts(db, actor.userId, folder);
  if (openTo(folder, facts.folderOpenTo) === actor.organizationId) return true;
  return canEdit(db, actor, folder, now);
}

/**
 * What decides, beside the document's row, whether a caller sees it (`canView`): read by one
 * statement (`visibilityFacts`), or with the document itself (GET /documents/:id).
 */
export interface VisibilityFacts {
  /**
   * The caller holds a share of the document (in any state), or an active share of it as a folder or
   * of a folder above it, theirs or their group's (organization's).
   */
  sharedWithCaller: boolean;
  /**
   * The organization of the top of the folder chain above it, when that top is shared (its members
   * see everything below it); undefined when it sits in no folder, the top is private, or the chain
   * is cut (`sharedTopOrganization`).
   */
  folderOpenTo: string | undefined;
}

/**
 * Who may see a document or folder: its owner or creator, administrators of its organization, the
 * users it is shared with, the users a folder above it is shared with (POST /share of a folder: for as
 * long as that share is active), and the members of the organization of a shared folder tree it sits in.
 *
 * spec Folder: "Access is inherited: nested folders under a shared folder are shared too, and under
 * a private folder private." A nested folder takes its parent's setting whatever its own `isShared`
 * says, so the outermost folder of the chain decides for everything below it: a shared folder inside
 * a private one is private, a private folder inside a shared one is shared. `openFolders` below is
 * the same rule as SQL, for search.
 */
export async function canView(db: Kysely<Database>, actor: Actor, doc: DocumentRow): Promise<boolean> {
  return seenByRow(actor, doc) ?? seenByFacts(actor, doc, await visibilityFacts(db, actor.userId, doc));
}

/** `canView` with its facts already read. */
export function canViewWith(actor: Actor, doc: VisibilityRow, facts: VisibilityFacts): boolean {
  return seenByRow(actor, doc) ?? seenByFacts(actor, doc, facts);
}

/** What the row alone decides of `canView`: undefined when the facts must. */
function seenByRow(actor: Actor, doc: VisibilityRow): boolean | undefined {
  if (doc.tenant_id !== actor.tenantId || doc.deleted_at !== null) return false;
  if (doc.owner_id === actor.userId || doc.created_by === actor.userId || administers(actor, doc))
    return true;
  return undefined;
}

function seenByFacts(actor: Actor, doc: VisibilityRow, facts: VisibilityFacts): boolean {
  // Internal recipients see what was shared with them (spec Sharing), whatever the share's state.
  return facts.sharedWithCaller || openTo(doc, facts.folderOpenTo) === actor.organizationId;
}

/**
 * The organization whose members see a document or folder through a shared folder tree: that of the
 * shared top of its chain (`above`, read by `sharedTopOrganization`); a top-level folder is its own top.
 */
function openTo(doc: FolderLink, above: string | undefined): string | undefined {
  if (doc.folder_id !== null) return above;
  return doc.kind === 'folder' && doc.is_shared === 1 ? doc.organization_id : undefined;
}

type FolderLink = Pick<DocumentRow, 'folder_id' | 'is_shared' | 'organization_id' | 'kind'>;

/**
 * The organization of the top of the folder chain above `folderId` (a column of the outer query, or a
 * value) when that top is shared: the first folder up the chain without a parent. NULL when it is
 * private, or the chain is cut by a deleted or missing folder or a loop (MAX_FOLDER_DEPTH steps from
 * the document). One recursive subquery instead of a statement per folder. A deleted folder is
 * marked (`cut`) rather than filtered out of the join: PostgreSQL, unsure how many rows have no
 * `deleted_at` (a young table without statistics), would scan the table at each step.
 */
function sharedTopOrganization(db: Kysely<Database>, folderId: Expression<string | null>) {
  return db
    .withRecursive('chain(folder_id, kind, is_shared, organization_id, cut, depth)', (qb) =>
      qb
        .selectFrom('documents')
        .select([
          'folder_id',
          'kind',
          'is_shared',
          'organization_id',
          sql<number>`case when deleted_at is null then 0 else 1 end`.as('cut'),
          sql<number>`1`.as('depth'),
        ])
        .where('id', '=', folderId)
        .unionAll((step) =>
          step
            .selectFrom('chain')
            .innerJoin('documents as parent', 'parent.id', 'chain.folder_id')
            .select([
              'parent.folder_id',
              'parent.kind',
              'parent.is_shared',
              'parent.organization_id',
              sql<number>`case when ${sql.ref('chain.cut')} = 0 and ${sql.ref('parent.deleted_at')} is null then 0 else 1 end`.as(
                'cut',
              ),
              sql<number>`${sql.ref('chain.depth')} + 1`.as('depth'),
            ])
            .where('chain.depth', '<', MAX_FOLDER_DEPTH - 1),
        ),
    )
    .selectFrom('chain')
    .select('chain.organization_id')
    .where('chain.folder_id', 'is', null)
    .where('chain.cut', '=', 0)
    .where('chain.kind', '=', 'folder')
    .where('chain.is_shared', '=', 1);
}

/**
 * The ids of the folders from `folderId` up the chain, as far as none of them is deleted (a deleted
 * folder cuts what is below it off from what is above it) or MAX_FOLDER_DEPTH steps: the folders whose
 * user shares a document in `folderId` inherits (spec Folder: "Access is inherited").
 */
function folderChain(db: Kysely<Database>, folderId: Expression<string | null>) {
  return db
    .withRecursive('up(id, folder_id, depth)', (qb) =>
      qb
        .selectFrom('documents')
        .select(['id', 'folder_id', sql<number>`1`.as('depth')])
        .where('id', '=', folderId)
        .where('deleted_at', 'is', null)
        .unionAll((step) =>
          step
            .selectFrom('up')
            .innerJoin('documents as parent', 'parent.id', 'up.folder_id')
            .select(['parent.id', 'parent.folder_id', sql<number>`${sql.ref('up.depth')} + 1`.as('depth')])
            .where('parent.deleted_at', 'is', null)
            .where('up.depth', '<', MAX_FOLDER_DEPTH - 1),
        ),
    )
    .selectFrom('up')
    .select('up.id');
}

/**
 * Whether `userId` holds a share of the document `d` that lets them see it: any share of a document
 * (internal recipients see what was shared with them, whatever the share's state), an active share of
 * a folder (revoked, expired or ended: no more), or an active share of a folder above it.
 */
function sharedWith(db: Kysely<Database>, userId: Expression<string>) {
  const shareOf = (document: Expression<string>) =>
    db
      .selectFrom('shares')
      .select(sql.lit(1).as('one'))
      .where('shares.document_id', '=', document)
      .where('shares.user_id', '=', userId);
  // A group share is the organization's: the caller's organization, read by the same statement.
  const callersGroup = db.selectFrom('users').select('users.organization_id').where('users.id', '=', userId);
  return sql<number>`case when exists ${shareOf(sql.ref('d.id')).where((eb) =>
    eb.or([eb(sql.ref('d.kind'), '=', sql.lit('document')), eb('shares.status', '=', sql.lit('active'))]),
  )} or exists ${db
    .selectFrom('shares')
    .select(sql.lit(1).as('one'))
    .where((eb) => eb.or([eb('shares.user_id', '=', userId), eb('shares.group_id', 'in', callersGroup)]))
    .where('shares.status', '=', sql.lit('active'))
    .where((eb) =>
      eb.or([
        // A folder shared with the caller's group: the folder itself (a user's share is `shareOf` above).
        eb.and([
          eb(sql.ref('d.kind'), '=', sql.lit('folder')),
          eb('shares.document_id', '=', sql.ref<string>('d.id')),
        ]),
        eb('shares.document_id', 'in', folderChain(db, sql.ref<string | null>('d.folder_id'))),
      ]),
    )} then 1 else 0 end`;
}

/**
 * Adds what `visibilityFacts` reads to a query of `documents as d`, for the caller `userId`: whether
 * they hold a share of it, and whom its folder tree opens it to. Read the row's facts with `factsOf`.
 */
export function withVisibilityFacts<O>(
  db: Kysely<Database>,
  query: SelectQueryBuilder<Database & { d: DocumentTable }, 'd', O>,
  userId: Expression<string>,
) {
  return query.select([
    sharedWith(db, userId).as('shared_with_caller'),
    sharedTopOrganization(db, sql.ref<string | null>('d.folder_id')).as('folder_open_to'),
  ]);
}

/** The facts of a row read `withVisibilityFacts`. */
export function factsOf(row: { shared_with_caller: number; folder_open_to: string | null }): VisibilityFacts {
  return {
    sharedWithCaller: Number(row.shared_with_caller) === 1,
    folderOpenTo: row.folder_open_to ?? undefined,
  };
}

const factsOfOne = new QueryTemplate((db, p: { documentId: string; userId: string }) =>
  withVisibilityFacts(db, db.selectFrom('documents as d'), sql.val(p.userId)).where(
    'd.id',
    '=',
    p.documentId,
  ),
);

/** The facts of `canView` for one document and caller: one statement. */
async function visibilityFacts(
  db: Kysely<Database>,
  userId: string,
  doc: DocumentRow,
): Promise<VisibilityFacts> {
  const [row] = await factsOfOne.execute(db, { documentId: doc.id, userId });
  return row ? factsOf(row) : { sharedWithCaller: false, folderOpenTo: undefined };
}

const sharedTopOfFolder = new QueryTemplate((db, p: { folderId: string }) =>
  db.selectNoFrom(sharedTopOrganization(db, sql.val(p.folderId)).as('folder_open_to')),
);

/** Whether a folder is shared with its organization: its own setting at the top, its parent's below (see `canView`). */
export async function isEffectivelyShared(db: Kysely<Database>, folder: FolderLink): Promise<boolean> {
  const above =
    folder.folder_id === null
      ? undefined
      : (await sharedTopOfFolder.execute(db, { folderId: folder.folder_id }))[0]?.folder_open_to;
  return openTo(folder, above ?? undefined) !== undefined;
}

export type WithOpenFolders = Database & { open_folders: { id: string }; shared_folders: { id: string } };

/**
 * `canView` as SQL, for searches over many rows: the caller's own and created documents, those of the
 * organizations they administer, those shared with them, and everything in `open_folders` or
 * `shared_folders` or directly inside one. Use with `withOpenFolders`.
 */
export function visibleTo(actor: Pick<Actor, 'role' | 'tenantId' | 'organizationId' | 'userId'>) {
  return (eb: ExpressionBuilder<WithOpenFolders, 'documents'>): Expression<SqlBool> => {
    const admin = isAdmin(actor.role);
    const seen: Expression<SqlBool>[] = [
      eb('documents.owner_id', '=', actor.userId),
      eb('documents.created_by', '=', actor.userId),
      // A document shared with the caller, in any state; a folder only while shared (`shared_folders`).
      eb.and([
        eb('documents.kind', '=', sql.lit('document')),
        eb.exists(
          eb
            .selectFrom('shares')
            .select(sql.lit(1).as('one'))
            .whereRef('shares.document_id', '=', 'documents.id')
            .where('shares.user_id', '=', actor.userId),
        ),
      ]),
      eb('documents.folder_id', 'in', eb.selectFrom('open_folders').select('open_folders.id')),
      eb('documents.id', 'in', eb.selectFrom('open_folders').select('open_folders.id')),
      eb('documents.folder_id', 'in', eb.selectFrom('shared_folders').select('shared_folders.id')),
      eb('documents.id', 'in', eb.selectFrom('shared_folders').select('shared_folders.id')),
    ];
    if (admin && !isTenantWide(actor.role))
      seen.push(eb('documents.organization_id', '=', actor.organizationId));
    return eb.and([
      eb('documents.tenant_id', '=', actor.tenantId),
      eb('documents.deleted_at', 'is', null),
      ...(admin && isTenantWide(actor.role) ? [] : [eb.or(seen)]),
    ]);
  };
}

/**
 * Adds `open_folders` to a query: the top-level shared folders of the caller's organization and every
 * folder below them, whatever their own setting (spec Folder, see `canView`). A shared folder inside
 * a private one is not reached, as the recursion starts at the top. And `shared_folders`: the folders
 * shared with the caller by POST /share (while active) and every folder below them.
 */
export function withOpenFolders(
  db: Kysely<Database>,
  actor: Pick<Actor, 'tenantId' | 'organizationId' | 'userId'>,
) {
  return db
    .withRecursive('open_folders(id)', (qb) =>
      qb
        .selectFrom('documents')
        .select('documents.id')
        .where('documents.tenant_id', '=', actor.tenantId)
        .where('documents.kind', '=', sql.lit('folder'))
        .where('documents.folder_id', 'is', null)
        .where('documents.is_shared', '=', sql.lit(1))
        .where('documents.organization_id', '=', actor.organizationId)
        .where('documents.deleted_at', 'is', null)
        .union(
          qb
            .selectFrom('documents as child')
            .innerJoin('open_folders', 'open_folders.id', 'child.folder_id')
            .select('child.id')
            .where('child.kind', '=', sql.lit('folder'))
            .where('child.deleted_at', 'is', null),
        ),
    )
    .withRecursive('shared_folders(id)', (qb) =>
      // The folders shared with the caller or their group (an active share), and every folder below them.
      qb
        .selectFrom('shares')
        .innerJoin('documents', 'documents.id', 'shares.document_id')
        .select('documents.id')
        .where((eb) =>
          eb.or([eb('shares.user_id', '=', actor.userId), eb('shares.group_id', '=', actor.organizationId)]),
        )
        .where('shares.status', '=', sql.lit('active'))
        .where('documents.kind', '=', sql.lit('folder'))
        .where('documents.deleted_at', 'is', null)
        .union(
          qb
            .selectFrom('documents as child')
            .innerJoin('shared_folders', 'shared_folders.id', 'child.folder_id')
            .select('child.id')
            .where('child.kind', '=', sql.lit('folder'))
            .where('child.deleted_at', 'is', null),
        ),
    );
}

/** Loads a document the caller may see; anything else is "not found" (never leak existence). */
export async function loadVisible(db: Kysely<Database>, actor: Actor, id: string): Promise<DocumentRow> {
  const doc = await db.selectFrom('documents').selectAll().where('id', '=', id).executeTakeFirst();
  if (!doc || !(await canView(db, actor, doc))) throw new NotFound('No such document');
  return doc;
}

/** Loads a document the caller manages (`canManage`): unseen is 404, seen but not theirs is 403. */
export async function loadManageable(db: Kysely<Database>, actor: Actor, id: string): Promise<DocumentRow> {
  const doc = await loadVisible(db, actor, id);
  if (!canManage(actor, doc))
    throw new Forbidden('Only the owner or an administrator may change this document');
  return doc;
}

/** Loads a document the caller may edit (`canEdit`): unseen is 404, seen but not editable is 403. */
export async function loadEditable(
  db: Kysely<Database>,
  actor: Actor,
  id: string,
  now: Date,
): Promise<DocumentRow> {
  const doc = await loadVisible(db, actor, id);
  if (!(await canEdit(db, actor, doc, now)))
    throw new Forbidden(
      'Only the owner, an administrator or a user it is shared with for edit may change this document',
    );
  return doc;
}

/** The files of a document that is not deleted (its main file and barcode), or nothing. */
export function liveDocumentFiles(
  db: Kysely<Database>,
  documentId: string,
): Promise<{ main_file_id: string | null; barcode_file_id: string | null } | undefined> {
  return db
    .selectFrom('documents')
    .select(['main_file_id', 'barcode_file_id'])
    .where('id', '=', documentId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}
