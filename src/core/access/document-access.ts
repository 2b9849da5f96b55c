import {
  sql,
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type Selectable,
  type SqlBool,
} from 'kysely';
import type { Actor } from './actor.js';
import { Forbidden, NotFound } from '../errors.js';
import type { Database, DocumentTable } from '../../store/db/schema.js';
import { isAdmin, isTenantWide } from './roles.js';

export type DocumentRow = Selectable<DocumentTable>;

// Folders nest; a loop (never written by us, but cheap to guard) must not hang a request.
const MAX_FOLDER_DEPTH = 64;

function administers(actor: Actor, doc: DocumentRow): boolean {
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
  // An edit share owes no action, so it is never waiting for a turn: active until it ends.
  const shares = await db
    .selectFrom('shares')
    .select('valid_until')
    .where('document_id', '=', doc.id)
    .where('user_id', '=', actor.userId)
    .where('purpose', '=', 'edit')
    .where('status', '=', 'active')
    .execute();
  return shares.some((s) => s.valid_until === null || new Date(s.valid_until) > now);
}

/**
 * Who may see a document or folder: its owner or creator, administrators of its organization, the
 * users it is shared with, and the members of the organization of a shared folder tree it sits in.
 *
 * spec Folder: "Access is inherited: nested folders under a shared folder are shared too, and under
 * a private folder private." A nested folder takes its parent's setting whatever its own `isShared`
 * says, so the outermost folder of the chain decides for everything below it: a shared folder inside
 * a private one is private, a private folder inside a shared one is shared. `openFolders` below is
 * the same rule as SQL, for search.
 */
export async function canView(db: Kysely<Database>, actor: Actor, doc: DocumentRow): Promise<boolean> {
  if (doc.tenant_id !== actor.tenantId || doc.deleted_at !== null) return false;
  if (doc.owner_id === actor.userId || doc.created_by === actor.userId || administers(actor, doc))
    return true;
  // Internal recipients see what was shared with them (spec Sharing), whatever the share's state.
  const shared = await db
    .selectFrom('shares')
    .select('id')
    .where('document_id', '=', doc.id)
    .where('user_id', '=', actor.userId)
    .executeTakeFirst();
  if (shared) return true;
  const outermost = await outermostFolder(db, doc);
  return (
    outermost !== undefined && outermost.is_shared === 1 && outermost.organization_id === actor.organizationId
  );
}

type FolderLink = Pick<DocumentRow, 'id' | 'folder_id' | 'is_shared' | 'organization_id' | 'kind'>;

/**
 * The top of the folder chain a document or folder sits in (a top-level folder is its own top), or
 * undefined when it sits in no folder or the chain is cut by a deleted folder or a loop.
 */
async function outermostFolder(db: Kysely<Database>, doc: FolderLink): Promise<FolderLink | undefined> {
  let current: FolderLink | undefined = doc;
  for (let depth = 0; current && depth < MAX_FOLDER_DEPTH; depth++) {
    if (!current.folder_id) return current.kind === 'folder' ? current : undefined;
    current = await db
      .selectFrom('documents')
      .select(['id', 'folder_id', 'is_shared', 'organization_id', 'kind'])
      .where('id', '=', current.folder_id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  }
  return undefined;
}

/** Whether a folder is shared with its organization: its own setting at the top, its parent's below (see `canView`). */
export async function isEffectivelyShared(db: Kysely<Database>, folder: FolderLink): Promise<boolean> {
  return (await outermostFolder(db, folder))?.is_shared === 1;
}

export type WithOpenFolders = Database & { open_folders: { id: string } };

/**
 * `canView` as SQL, for searches over many rows: the caller's own and created documents, those of the
 * organizations they administer, those shared with them, and everything in `open_folders` or
 * directly inside one. Use with `withOpenFolders`.
 */
export function visibleTo(actor: Actor) {
  return (eb: ExpressionBuilder<WithOpenFolders, 'documents'>): Expression<SqlBool> => {
    const admin = isAdmin(actor.role);
    const seen: Expression<SqlBool>[] = [
      eb('documents.owner_id', '=', actor.userId),
      eb('documents.created_by', '=', actor.userId),
      eb.exists(
        eb
          .selectFrom('shares')
          .select(sql.lit(1).as('one'))
          .whereRef('shares.document_id', '=', 'documents.id')
          .where('shares.user_id', '=', actor.userId),
      ),
      eb('documents.folder_id', 'in', eb.selectFrom('open_folders').select('open_folders.id')),
      eb('documents.id', 'in', eb.selectFrom('open_folders').select('open_folders.id')),
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
 * a private one is not reached, as the recursion starts at the top.
 */
export function withOpenFolders(db: Kysely<Database>, actor: Actor) {
  return db.withRecursive('open_folders(id)', (qb) =>
    qb
      .selectFrom('documents')
      .select('documents.id')
      .where('documents.tenant_id', '=', actor.tenantId)
      .where('documents.kind', '=', 'folder')
      .where('documents.folder_id', 'is', null)
      .where('documents.is_shared', '=', 1)
      .where('documents.organization_id', '=', actor.organizationId)
      .where('documents.deleted_at', 'is', null)
      .union(
        qb
          .selectFrom('documents as child')
          .innerJoin('open_folders', 'open_folders.id', 'child.folder_id')
          .select('child.id')
          .where('child.kind', '=', 'folder')
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
