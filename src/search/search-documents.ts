import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import {
  canView,
  loadVisible,
  visibleTo,
  withOpenFolders,
  type WithOpenFolders,
} from '../core/access/document-access.js';
import { documentView, type DocumentView } from '../core/views/document-view.js';
import { countRows } from '../store/db/count-rows.js';
import type { Database } from '../store/db/schema.js';

export interface DocumentSearch {
  from?: number | undefined;
  size?: number | undefined;
  /** Words looked for in titles and custom field values (case-insensitive, all must appear). */
  text?: string | undefined;
  folderId?: string | undefined;
  kind?: 'document' | 'folder' | undefined;
  shareStateName?: string | undefined;
  isSigned?: boolean | undefined;
  sort?: 'createDate' | 'modifyDate' | 'documentTitle' | undefined;
  order?: 'asc' | 'desc' | undefined;
}

export interface SearchAnswer {
  from: number;
  size: number;
  total: number;
  results: DocumentView[];
  /** The users the results name (owners and creators), once each. */
  users: { id: string; name: string; displayName: string | null }[];
}

export const DEFAULT_SEARCH_SIZE = 20;

type Eb = ExpressionBuilder<Database, 'documents'>;
/**
 * POST /search (spec: `{from, size}` → `{from, total, results, users, ...}`): the documents and folders
 * the caller may see, filtered and sorted, with each result shaped like GET /documents/:id.
 */
export async function searchDocuments(
  deps: Deps,
  actor: Actor,
  search: DocumentSearch,
): Promise<SearchAnswer> {
  const from = search.from ?? 0;
  const size = search.size ?? DEFAULT_SEARCH_SIZE;
  const words = (search.text ?? '')
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w.length > 0)
    .slice(0, 10);
  const where = (eb: ExpressionBuilder<WithOpenFolders, 'documents'>): Expression<SqlBool> => {
    const parts: Expression<SqlBool>[] = [visibleTo(actor)(eb)];
    if (search.folderId !== undefined) parts.push(eb('documents.folder_id', '=', search.folderId));
    if (search.kind) parts.push(eb('documents.kind', '=', search.kind));
    if (search.shareStateName) parts.push(eb('documents.share_state', '=', search.shareStateName));
    if (search.isSigned !== undefined) parts.push(eb('documents.is_signed', '=', search.isSigned ? 1 : 0));
    for (const word of words) {
      const pattern = `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      parts.push(
        eb.or([
          sql<SqlBool>`lower(${eb.ref('documents.title')}) like ${pattern} escape '\\'`,
          sql<SqlBool>`lower(cast(${eb.ref('documents.custom_fields')} as text)) like ${pattern} escape '\\'`,
        ]),
      );
    }
    return eb.and(parts);
  };

  const total = await countRows(withOpenFolders(deps.db, actor).selectFrom('documents').where(where));
  const column = { createDate: 'created_at', modifyDate: 'updated_at', documentTitle: 'title' } as const;
  const order = search.order ?? (search.sort === 'documentTitle' ? 'asc' : 'desc');
  const rows = await withOpenFolders(deps.db, actor)
    .selectFrom('documents')
    .selectAll('documents')
    .where(where)
    .orderBy(`documents.${column[search.sort ?? 'createDate']}`, order)
    .orderBy('documents.id', order)
    .limit(size)
    .offset(from)
    .execute();
  const results = await Promise.all(rows.map((row) => documentView(deps.db, actor, row)));
  const userIds = [...new Set(rows.flatMap((row) => [row.owner_id, row.created_by]))];
  const users =
    userIds.length === 0
      ? []
      : await deps.db
          .selectFrom('users')
          .select(['id', 'name', 'display_name'])
          .where('id', 'in', userIds)
          .where('tenant_id', '=', actor.tenantId)
          .orderBy('name')
          .execute();
  return {
    from,
    size,
    total,
    results,
    users: users.map((u) => ({ id: u.id, name: u.name, displayName: u.display_name })),
  };
}

export interface Location {
  documentId: string;
  kind: 'document' | 'folder';
  /** The folders above it, outermost first (only those the caller may see). */
  path: { id: string; name: string }[];
  /** Its index in POST /search's default order: ask for `from` = this to get a page starting with it. */
  from: number;
}

/** POST /search/locate: where a document the caller may see sits, for jumping to it in a listing. */
export async function locateDocument(deps: Deps, actor: Actor, id: string): Promise<Location> {
  const doc = await loadVisible(deps.db, actor, id);
  const path: Location['path'] = [];
  let folderId = doc.folder_id;
  for (let depth = 0; folderId && depth < 64; depth++) {
    const folder = await deps.db
      .selectFrom('documents')
      .selectAll()
      .where('id', '=', folderId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!folder) break;
    if (await canView(deps.db, actor, folder)) path.unshift({ id: folder.id, name: folder.title });
    folderId = folder.folder_id;
  }
  const before = await countRows(
    withOpenFolders(deps.db, actor)
      .selectFrom('documents')
      .where(visibleTo(actor))
      .where((eb: Eb) =>
        eb.or([
          eb('documents.created_at', '>', doc.created_at),
          eb.and([eb('documents.created_at', '=', doc.created_at), eb('documents.id', '>', doc.id)]),
        ]),
      ),
  );
  return { documentId: doc.id, kind: doc.kind, path, from: before };
}
