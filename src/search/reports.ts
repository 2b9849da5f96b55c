import type { Static } from 'typebox';
import type { ReportsBody } from './contract.js';
import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { Forbidden } from '../base/errors.js';
import { countRows } from '../store/db/count-rows.js';
import type { Database } from '../store/db/schema.js';
import { isTenantWide } from '../core/access/roles.js';
import { esFilterExpression } from './es-filters.js';
import { ScrollContexts } from '../core/scroll.js';

/** The `query` of POST /search/reports. */
export type ReportsQuery = Static<typeof ReportsBody>['query'];

export interface Transaction {
  shareId: string;
  shareType: string;
  sharedWith: string;
  sharedBy: string;
  status: string;
  order: number;
  shareDate: string;
  actionDate: string | null;
  reason: string | null;
}

/**
 * spec: Report result — `documentTitle`, `documentId`, `createName`, `shareStateName`, plus transaction
 * detail.
 */
export interface ReportRecord {
  documentId: string;
  documentTitle: string;
  documentType: string;
  createName: { id: string; name: string };
  owner: string;
  shareStateName: string | null;
  workflowType: string;
  isSigned: boolean;
  _version: number;
  createDate: string;
  modifyDate: string;
  transactions: Transaction[];
  /** Recipients of sign transactions and whether they signed. */
  signers: { name: string; status: string; signedAt: string | null }[];
}

export interface ReportsAnswer {
  from: number;
  total: number;
  results: ReportRecord[];
  scrollId?: string;
}

interface Cursor {
  createdAt: string;
  id: string;
  /**
   * How many records the scroll has handed out before this point: the next page's `from` (spec:
   * `from` is the 0-based offset of the page). Absent in contexts opened before it was kept.
   */
  served?: number;
}

export const DEFAULT_REPORT_SIZE = 100;

type Eb = ExpressionBuilder<Database, 'documents'>;

/**
 * POST /search/reports (spec: Reports and audit logs; right `use_all_documents_export`): the documents
 * of the caller's organization (the whole tenant for tenant-wide administrators), newest first,
 * filtered by `esFilters`, with their transaction detail. `from`/`size` page directly; with
 * `scroll.timeout` the answer carries a `scrollId` and repeating the request with it walks the rest
 * with keyset pages, as fast on the last page as on the first.
 */
export async function searchReports(deps: Deps, actor: Actor, query: ReportsQuery): Promise<ReportsAnswer> {
  if (!actor.rights.has('use_all_documents_export'))
    throw new Forbidden('Reports need the right use_all_documents_export');
  const filter = esFilterExpression(query.esFilters);
  const scope = (eb: Eb): Expression<SqlBool> =>
    eb.and([
      eb('documents.tenant_id', '=', actor.tenantId),
      ...(isTenantWide(actor.role) ? [] : [eb('documents.organization_id', '=', actor.organizationId)]),
      eb('documents.kind', '=', 'document'),
      eb('documents.deleted_at', 'is', null),
      filter(eb),
    ]);
  const size = query.size ?? DEFAULT_REPORT_SIZE;
  const scrolls = new ScrollContexts(deps, 'reports');
  const filters = query.esFilters ?? null;

  if (query.scroll?.id !== undefined) {
    const position = await scrolls.resume<Cursor>(actor, { scrollId: query.scroll.id, query: filters });
    const rows = await page(deps, scope, { after: position.cursor, size });
    const last = rows.at(-1);
    const from = position.cursor?.served ?? 0;
    const scrollId = await scrolls.advance(position, {
      cursor: last
        ? { createdAt: last.created_at, id: last.id, served: from + rows.length }
        : position.cursor,
      timeoutSeconds: query.scroll.timeout,
    });
    return { from, total: position.total, results: await records(deps, rows), scrollId };
  }

  const from = query.from ?? 0;
  const total = await countRows(deps.db.selectFrom('documents').where(scope));
  const rows = await page(deps, scope, { offset: from, size });
  const results = await records(deps, rows);
  if (query.scroll?.timeout === undefined) return { from, total, results };
  const position = await scrolls.open<Cursor>(actor, {
    query: filters,
    timeoutSeconds: query.scroll.timeout,
    total,
  });
  const last = rows.at(-1);
  const scrollId = await scrolls.advance(position, {
    // An empty first page leaves nothing to continue: the cursor then sorts before everything.
    cursor: last
      ? { createdAt: last.created_at, id: last.id, served: from + rows.length }
      : { createdAt: '0001-01-01T00:00:00.000Z', id: '', served: from },
  });
  return { from, total, results, scrollId };
}

async function page(
  deps: Deps,
  scope: (eb: Eb) => Expression<SqlBool>,
  options: { after?: Cursor | undefined; offset?: number; size: number },
) {
  let query = deps.db
    .selectFrom('documents')
    .leftJoin('users as creator', 'creator.id', 'documents.created_by')
    .leftJoin('users as owner', 'owner.id', 'documents.owner_id')
    .select([
      'documents.id',
      'documents.title',
      'documents.document_type',
      'documents.created_by',
      'documents.share_state',
      'documents.workflow',
      'documents.is_signed',
      'documents.version',
      'documents.created_at',
      'documents.updated_at',
      'creator.name as creator_name',
      'owner.name as owner_name',
      'documents.owner_id',
    ])
    .where(scope)
    .orderBy('documents.created_at', 'desc')
    .orderBy('documents.id', 'desc')
    .limit(options.size);
  const after = options.after;
  if (after) {
    // A row-value comparison: both databases walk the (created_at, id) index from the cursor on.
    query = query.where(
      sql<SqlBool>`(${sql.ref('documents.created_at')}, ${sql.ref('documents.id')}) < (${after.createdAt}, ${after.id})`,
    );
  }
  if (options.offset) query = query.offset(options.offset);
  return query.execute();
}

type PageRow = Awaited<ReturnType<typeof page>>[number];

async function records(deps: Deps, rows: PageRow[]): Promise<ReportRecord[]> {
  const ids = rows.map((row) => row.id);
  const shares =
    ids.length === 0
      ? []
      : await deps.db
          .selectFrom('shares')
          .select([
            'id',
            'document_id',
            'purpose',
            'share_to',
            'shared_by',
            'status',
            'position',
            'created_at',
            'acted_at',
            'reason',
          ])
          .where('document_id', 'in', ids)
          .orderBy('created_at')
          .orderBy('position')
          .execute();
  const byDocument = new Map<string, Transaction[]>();
  for (const share of shares) {
    const list = byDocument.get(share.document_id) ?? [];
    list.push({
      shareId: share.id,
      shareType: share.purpose,
      sharedWith: share.share_to,
      sharedBy: share.shared_by,
      status: share.status,
      order: share.position,
      shareDate: new Date(share.created_at).toISOString(),
      actionDate: share.acted_at ? new Date(share.acted_at).toISOString() : null,
      reason: share.reason,
    });
    byDocument.set(share.document_id, list);
  }
  return rows.map((row) => {
    const transactions = byDocument.get(row.id) ?? [];
    return {
      documentId: row.id,
      documentTitle: row.title,
      documentType: row.document_type,
      createName: { id: row.created_by, name: row.creator_name ?? row.created_by },
      owner: row.owner_name ?? row.owner_id,
      shareStateName: row.share_state,
      workflowType: row.workflow,
      isSigned: row.is_signed === 1,
      _version: row.version,
      createDate: new Date(row.created_at).toISOString(),
      modifyDate: new Date(row.updated_at).toISOString(),
      transactions,
      signers: transactions
        .filter((t) => t.shareType === 'sign')
        .map((t) => ({
          name: t.sharedWith,
          status: t.status,
          signedAt: t.status === 'done' ? t.actionDate : null,
        })),
    };
  });
}
