import type { Static } from 'typebox';
import type { SearchBody } from './contract.js';
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
import {
  SHOWN_COLUMNS,
  shapeDocument,
  withViewParts,
  type DocumentView,
} from '../core/views/document-view.js';
import { countRows } from '../store/db/count-rows.js';
import { dialectOf } from '../store/db/dialect.js';
import { QueryTemplate } from '../store/db/query-template.js';
import type { Database, DocumentTable } from '../store/db/schema.js';

/**
 * The body of POST /search; `text` is words looked for in titles and custom field values (case-insensitive,
 * all must appear).
 */
export type DocumentSearch = Static<typeof SearchBody>;

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

/** What varies between two searches of one shape (`SearchShape`): the values of its statement. */
interface SearchValues {
  tenantId: string;
  organizationId: string;
  userId: string;
  folderId: string;
  kind: DocumentTable['kind'];
  shareStateName: string;
  isSigned: number;
  from: number;
  /** The `LIKE` pattern of each word (`word0`, `word1`, …). */
  [word: `word${number}`]: string;
}

/** What decides the text of a search's statement: the caller's reach, the filters given, the order. */
interface SearchShape {
  role: Actor['role'];
  folderId: boolean;
  kind: boolean;
  shareStateName: boolean;
  isSigned: boolean;
  words: number;
  /** The page size, written into the statement: SQLite plans `limit ?` for any size, several times slower. */
  size: number;
  sort: 'created_at' | 'updated_at' | 'title';
  order: 'asc' | 'desc';
}

const SORT_COLUMNS = { createDate: 'created_at', modifyDate: 'updated_at', documentTitle: 'title' } as const;

/** The filter of a search of `shape`, over `documents`, its values taken from `p`. */
function matching(shape: SearchShape, p: SearchValues) {
  // Only the role is read from the actor here (who sees what); its ids are the statement's values.
  const reader = {
    role: shape.role,
    tenantId: p.tenantId,
    organizationId: p.organizationId,
    userId: p.userId,
  };
  return (eb: ExpressionBuilder<WithOpenFolders, 'documents'>): Expression<SqlBool> => {
    const parts: Expression<SqlBool>[] = [visibleTo(reader)(eb)];
    if (shape.folderId) parts.push(eb('documents.folder_id', '=', p.folderId));
    if (shape.kind) parts.push(eb('documents.kind', '=', p.kind));
    if (shape.shareStateName) parts.push(eb('documents.share_state', '=', p.shareStateName));
    if (shape.isSigned) parts.push(eb('documents.is_signed', '=', p.isSigned));
    for (let i = 0; i < shape.words; i++) {
      const pattern = p[`word${i}`];
      parts.push(
        eb.or([
          sql<SqlBool>`lower(${eb.ref('documents.title')}) like ${pattern} escape '\\'`,
          sql<SqlBool>`lower(cast(${eb.ref('documents.custom_fields')} as text)) like ${pattern} escape '\\'`,
        ]),
      );
    }
    return eb.and(parts);
  };
}

/**
 * The ids of a page of a search of `shape`, each row carrying the count of all that match (a
 * subquery run once). Over an empty page there is no row to carry the count: `countStatement` then.
 * (`count(*) over ()` would count in the same pass, but SQLite then reads and sorts every match:
 * several times slower than reading the page in index order and counting apart.)
 */
function pageStatement(shape: SearchShape) {
  return new QueryTemplate((db, p: SearchValues) => {
    const where = matching(shape, p);
    return withOpenFolders(db, { tenantId: p.tenantId, organizationId: p.organizationId, userId: p.userId })
      .selectFrom('documents')
      .select((eb) => [
        'documents.id',
        eb.selectFrom('documents').select(eb.fn.countAll<number>().as('count')).where(where).as('total'),
      ])
      .where(where)
      .orderBy(`documents.${shape.sort}`, shape.order)
      .orderBy('documents.id', shape.order)
      .limit(sql<number>`${sql.lit(shape.size)}`)
      .offset(p.from);
  });
}

function countStatement(shape: SearchShape) {
  return new QueryTemplate((db, p: SearchValues) =>
    withOpenFolders(db, { tenantId: p.tenantId, organizationId: p.organizationId, userId: p.userId })
      .selectFrom('documents')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where(matching(shape, p)),
  );
}

/**
 * The documents of a page, each with what its view shows (`withViewParts`) and the display names of
 * its owner and creator (the answer's `users`), in any order.
 */
const pageDocuments = new QueryTemplate((db, p: { ids: unknown }, dialect) =>
  withViewParts(
    db,
    db.selectFrom('documents as d').select(SHOWN_COLUMNS.map((column) => `d.${column}` as const)),
  )
    .select(['owner.display_name as owner_display_name', 'creator.display_name as creator_display_name'])
    .where(dialect.isInTextList('d.id', p.ids))
    .where('d.deleted_at', 'is', null),
);

/** The statements of each shape, built once: their number is bounded by the shapes' combinations. */
const statements = new Map<
  string,
  { page: ReturnType<typeof pageStatement>; count: ReturnType<typeof countStatement> }
>();

function statementsOf(shape: SearchShape) {
  const key = JSON.stringify(shape);
  let found = statements.get(key);
  if (!found) {
    found = { page: pageStatement(shape), count: countStatement(shape) };
    statements.set(key, found);
  }
  return found;
}

type PageDocument = Awaited<ReturnType<typeof pageDocuments.execute>>[number];

/** The users a page names (owners and creators), once each, by name (then id). */
function usersNamed(rows: readonly PageDocument[]): SearchAnswer['users'] {
  const users = new Map<string, SearchAnswer['users'][number]>();
  for (const row of rows) {
    if (row.owner_name !== null)
      users.set(row.owner_id, {
        id: row.owner_id,
        name: row.owner_name,
        displayName: row.owner_display_name,
      });
    if (row.creator_name !== null)
      users.set(row.created_by, {
        id: row.created_by,
        name: row.creator_name,
        displayName: row.creator_display_name,
      });
  }
  const byName = (a: { name: string; id: string }, b: { name: string; id: string }) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  return [...users.values()].sort(byName);
}

/**
 * POST /search (spec: `{from, size}` → `{from, total, results, users, ...}`): the documents and folders
 * the caller may see, filtered and sorted, with each result shaped like GET /documents/:id. Two
 * statements: the page's ids with the count of all that match (one pass over them), then those
 * documents with what their views show; the users come from the second. A page past the end counts
 * with a third.
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
  const shape: SearchShape = {
    role: actor.role,
    folderId: search.folderId !== undefined,
    kind: search.kind !== undefined,
    shareStateName: Boolean(search.shareStateName),
    isSigned: search.isSigned !== undefined,
    words: words.length,
    size,
    sort: SORT_COLUMNS[search.sort ?? 'createDate'],
    order: search.order ?? (search.sort === 'documentTitle' ? 'asc' : 'desc'),
  };
  const values: SearchValues = {
    tenantId: actor.tenantId,
    organizationId: actor.organizationId,
    userId: actor.userId,
    folderId: search.folderId ?? '',
    kind: search.kind ?? 'document',
    shareStateName: search.shareStateName ?? '',
    isSigned: search.isSigned ? 1 : 0,
    from,
    ...Object.fromEntries(
      words.map((word, i) => [`word${i}`, `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`]),
    ),
  };
  const { page, count } = statementsOf(shape);
  const listed = await page.execute(deps.db, values);
  const total = listed[0]
    ? Number(listed[0].total)
    : from === 0
      ? 0
      : Number((await count.execute(deps.db, values))[0]?.count ?? 0);
  const ids = listed.map((row) => row.id);
  const rows =
    ids.length > 0 ? await pageDocuments.execute(deps.db, { ids: dialectOf(deps.db).textList(ids) }) : [];
  const byId = new Map(rows.map((row) => [row.id, row]));
  // A document deleted between the two statements is left out, as a search a moment later would.
  const documents = ids.flatMap((id) => byId.get(id) ?? []);
  return {
    from,
    size,
    total,
    results: documents.map((row) => shapeDocument(actor, row, row)),
    users: usersNamed(documents),
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
