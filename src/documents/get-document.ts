import { sql } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import {
  VISIBILITY_COLUMNS,
  canViewWith,
  factsOf,
  withVisibilityFacts,
} from '../core/access/document-access.js';
import { NotFound } from '../base/errors.js';
import {
  SHOWN_COLUMNS,
  shapeDocument,
  withViewParts,
  type DocumentView,
} from '../core/views/document-view.js';
import { BatchedLookup } from '../store/db/batched-lookup.js';
import { QueryTemplate } from '../store/db/query-template.js';

/**
 * Documents with what their view shows and the facts of `canView` for their reader, for a list of
 * `[documentId, userId]` pairs (JSON text): one statement for every read asked in one turn.
 */
const readDocuments = new QueryTemplate((db, p: { pairs: string }, dialect) =>
  withViewParts(
    db,
    withVisibilityFacts(db, db.selectFrom('documents as d'), sql<string>`${sql.ref('reader.value')} ->> 1`),
  )
    .innerJoin(dialect.jsonElements(p.pairs).as('reader'), (join) =>
      join.on('d.id', '=', sql<string>`${sql.ref('reader.value')} ->> 0`),
    )
    .select([...new Set([...SHOWN_COLUMNS, ...VISIBILITY_COLUMNS])].map((column) => `d.${column}` as const))
    .select(sql<string>`${sql.ref('reader.value')} ->> 1`.as('reader_id')),
);

type DocumentReadRow = Awaited<ReturnType<typeof readDocuments.execute>>[number];

/** The reads of each database: its concurrent document reads share one statement. */
const readers = new WeakMap<object, BatchedLookup<string, DocumentReadRow>>();

function readerOf(deps: Deps): BatchedLookup<string, DocumentReadRow> {
  let reader = readers.get(deps.db);
  if (!reader) {
    const { db } = deps;
    reader = new BatchedLookup(async (keys: string[]) => {
      const rows = await readDocuments.execute(db, { pairs: `[${keys.join(',')}]` });
      return new Map(rows.map((row) => [readKey(row.id, row.reader_id), row]));
    });
    readers.set(db, reader);
  }
  return reader;
}

/** A read's key, and its element of the statement's list: `[documentId, userId]` as JSON. */
function readKey(documentId: string, userId: string): string {
  return JSON.stringify([documentId, userId]);
}

/**
 * GET /documents/:documentId: 404 for a document the caller may not see. The document, what its
 * view shows and whether the caller may see it are read together, after the request arrived (no
 * cache: a share revoked or a folder moved a moment before counts), in one statement with the other
 * reads of the same turn of the event loop (bench/README.md: API throughput).
 */
export async function getDocument(deps: Deps, actor: Actor, id: string): Promise<DocumentView> {
  const row = await readerOf(deps).get(readKey(id, actor.userId));
  if (!row || !canViewWith(actor, row, factsOf(row))) throw new NotFound('No such document');
  return shapeDocument(actor, row, row);
}
