import type { Kysely, Selectable } from 'kysely';
import type { Actor } from '../auth/actor.js';
import { Forbidden, NotFound } from '../errors.js';
import type { Database, DocumentTable } from '../store/db/schema.js';
import { isAdmin, isTenantWide } from '../users/roles.js';

export type DocumentRow = Selectable<DocumentTable>;

// Folders nest; a loop (never written by us, but cheap to guard) must not hang a request.
const MAX_FOLDER_DEPTH = 64;

function administers(actor: Actor, doc: DocumentRow): boolean {
  return isAdmin(actor.role) && (isTenantWide(actor.role) || doc.organization_id === actor.organizationId);
}

/**
 * Edit permission: the owner, or an administrator of the document's organization. Members see the
 * content of shared folders and may add to them, but change only what they own.
 */
export function canEdit(actor: Actor, doc: DocumentRow): boolean {
  return doc.tenant_id === actor.tenantId && (doc.owner_id === actor.userId || administers(actor, doc));
}

/**
 * Who may see a document or folder: its owner or creator, administrators of its organization, the
 * users it is shared with, and, through a shared folder it sits in (spec Folder: access is inherited by nested folders), the
 * members of that folder's organization.
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
  let current: Pick<DocumentRow, 'folder_id' | 'is_shared' | 'organization_id' | 'kind'> | undefined = doc;
  for (let depth = 0; current && depth < MAX_FOLDER_DEPTH; depth++) {
    if (
      current.kind === 'folder' &&
      current.is_shared === 1 &&
      current.organization_id === actor.organizationId
    ) {
      return true;
    }
    if (!current.folder_id) return false;
    current = await db
      .selectFrom('documents')
      .select(['folder_id', 'is_shared', 'organization_id', 'kind'])
      .where('id', '=', current.folder_id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  }
  return false;
}

/** Loads a document the caller may see; anything else is "not found" (never leak existence). */
export async function loadVisible(db: Kysely<Database>, actor: Actor, id: string): Promise<DocumentRow> {
  const doc = await db.selectFrom('documents').selectAll().where('id', '=', id).executeTakeFirst();
  if (!doc || !(await canView(db, actor, doc))) throw new NotFound('No such document');
  return doc;
}

/** Loads a document the caller may change: unseen is 404, seen but not theirs to change is 403. */
export async function loadEditable(db: Kysely<Database>, actor: Actor, id: string): Promise<DocumentRow> {
  const doc = await loadVisible(db, actor, id);
  if (!canEdit(actor, doc))
    throw new Forbidden('Only the owner or an administrator may change this document');
  return doc;
}
