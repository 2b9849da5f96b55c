import type { Static } from 'typebox';
import type { LogsSearchBody } from './contract.js';
import type { ExpressionBuilder, SqlBool, Expression } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import { isTenantWide } from '../core/access/roles.js';
import type { Deps } from '../core/deps.js';
import { Forbidden, ValidationError } from '../base/errors.js';
import { ScrollContexts } from '../core/scroll.js';
import { readJson } from '../store/db/json.js';
import { countRows } from '../store/db/count-rows.js';
import type { Database } from '../store/db/schema.js';

/** The body of POST /logs/search. */
export type LogsSearch = Static<typeof LogsSearchBody>;
/** One `logsQuery.query.filter` entry: `term`, `terms` or `range`. */
export type LogFilter = NonNullable<NonNullable<LogsSearch['logsQuery']['query']>['filter']>[number];

export interface LogRecord {
  id: string;
  time: string;
  activityType: string;
  actorId: string | null;
  objectType: string | null;
  objectId: string | null;
  requestId: string | null;
  data: Record<string, unknown>;
  hash: string;
}

export interface LogsAnswer {
  total: number;
  results: LogRecord[];
  scrollId?: string;
}

/** Fields a term filter may name, and their columns. */
const TERM_FIELDS = {
  activityType: 'activity_type',
  actorId: 'actor_id',
  objectType: 'object_type',
  objectId: 'object_id',
  requestId: 'request_id',
  id: 'id',
} as const;
/**
 * The kinds of audit object that belong to one organization, and the table saying which: a record
 * about one of them is that organization's, whoever acted (a tenant administrator, a recipient).
 */
const ORGANIZATION_OBJECTS = {
  documents: ['document', 'folder'],
  templates: ['template'],
  users: ['user'],
  files: ['file'],
  webhooks: ['webhook'],
  stamps: ['stamp'],
  enums: ['enum'],
} as const;
const ORGANIZATION_OBJECT_KINDS: string[] = Object.values(ORGANIZATION_OBJECTS).flat();
/** Fields a range filter may name. */
const RANGE_FIELDS = { time: 'occurred_at' } as const;

export const DEFAULT_LOGS_SIZE = 100;

type Eb = ExpressionBuilder<Database, 'audit_log'>;

/**
 * POST /logs/search (spec: Reports and audit logs; right `view_logs`): the tenant's audit records,
 * newest first, filtered by `logsQuery.query.filter`. With `scroll.timeout` the answer carries a
 * `scrollId`; a continuation repeats the same query with the latest `scroll.id`, may change `size`
 * and must not send `from` (DESIGN: 400). Pages are keyset on the record sequence, so records written
 * while scrolling never shift a page and each record is handed out once. Scoped like reports and
 * events (DESIGN, Decided this round: "audit logs ... show an organization admin only their
 * organization; global and super admins see the tenant"): see `inCallersOrganization`.
 */
export async function searchLogs(deps: Deps, actor: Actor, body: LogsSearch): Promise<LogsAnswer> {
  if (!actor.rights.has('view_logs')) throw new Forbidden('Searching audit logs needs the right view_logs');
  const filters = body.logsQuery.query?.filter ?? [];
  const where = (eb: Eb): Expression<SqlBool> =>
    eb.and([
      eb('audit_log.tenant_id', '=', actor.tenantId),
      ...(isTenantWide(actor.role) ? [] : [inCallersOrganization(eb, actor)]),
      ...filters.map((f, i) => filterExpression(eb, f, i)),
    ]);
  const size = body.logsQuery.size ?? DEFAULT_LOGS_SIZE;
  const scrolls = new ScrollContexts(deps, 'logs');
  const query = body.logsQuery.query ?? {};

  if (body.scroll?.id !== undefined) {
    if (body.logsQuery.from !== undefined) {
      throw new ValidationError(
        'logsQuery.from',
        'is not allowed in a continuation (send it only in the first request)',
      );
    }
    const position = await scrolls.resume<number>(actor, { scrollId: body.scroll.id, query });
    const results = await page(deps, where, { afterSeq: position.cursor, size });
    const scrollId = await scrolls.advance(position, {
      cursor: results.at(-1)?.seq ?? position.cursor,
      timeoutSeconds: body.scroll.timeout,
    });
    return { total: position.total, results: results.map(logRecord), scrollId };
  }

  const total = await countRows(deps.db.selectFrom('audit_log').where(where));
  const results = await page(deps, where, { offset: body.logsQuery.from ?? 0, size });
  if (body.scroll?.timeout === undefined) return { total, results: results.map(logRecord) };
  const position = await scrolls.open<number>(actor, { query, timeoutSeconds: body.scroll.timeout, total });
  const scrollId = await scrolls.advance(position, { cursor: results.at(-1)?.seq ?? 0 });
  return { total, results: results.map(logRecord), scrollId };
}

async function page(
  deps: Deps,
  where: (eb: Eb) => Expression<SqlBool>,
  options: { afterSeq?: number | undefined; offset?: number; size: number },
) {
  let query = deps.db
    .selectFrom('audit_log')
    .selectAll()
    .where(where)
    .orderBy('seq', 'desc')
    .limit(options.size);
  if (options.afterSeq !== undefined) query = query.where('seq', '<', options.afterSeq);
  if (options.offset) query = query.offset(options.offset);
  return query.execute();
}

/**
 * The records of the caller's organization: those about an object of the organization (a document,
 * user, template, …, by ORGANIZATION_OBJECTS), and those about anything else (an API key, a contact,
 * a login, nothing) done by one of its users. A record about an object that no longer exists, or a
 * tenant-wide one (a tenant webhook), is left to tenant administrators: unknown is not shown.
 */
function inCallersOrganization(eb: Eb, actor: Actor): Expression<SqlBool> {
  const aboutItsObjects = Object.entries(ORGANIZATION_OBJECTS).map(([table, kinds]) =>
    eb.and([
      eb('audit_log.object_type', 'in', [...kinds]),
      eb(
        'audit_log.object_id',
        'in',
        // One of the tables of ORGANIZATION_OBJECTS; each has `id` and `organization_id`.
        eb
          .selectFrom(table as 'documents')
          .select('id')
          .where('organization_id', '=', actor.organizationId),
      ),
    ]),
  );
  const byItsUsers = eb.and([
    eb.or([
      eb('audit_log.object_type', 'is', null),
      eb('audit_log.object_type', 'not in', ORGANIZATION_OBJECT_KINDS),
    ]),
    eb(
      'audit_log.actor_id',
      'in',
      eb
        .selectFrom('users')
        .select('users.name')
        .where('users.tenant_id', '=', actor.tenantId)
        .where('users.organization_id', '=', actor.organizationId),
    ),
  ]);
  return eb.or([...aboutItsObjects, byItsUsers]);
}

function filterExpression(eb: Eb, filter: LogFilter, index: number): Expression<SqlBool> {
  const path = `logsQuery.query.filter[${index}].field`;
  if (filter.type === 'range') {
    const column = RANGE_FIELDS[filter.field as keyof typeof RANGE_FIELDS];
    if (!column) throw new ValidationError(path, 'must be one of [time] for a range');
    const bounds: Expression<SqlBool>[] = [];
    for (const [key, op] of [
      ['gte', '>='],
      ['gt', '>'],
      ['lte', '<='],
      ['lt', '<'],
    ] as const) {
      const value = filter[key];
      if (value === undefined) continue;
      const time = new Date(value);
      if (Number.isNaN(time.getTime())) {
        throw new ValidationError(`logsQuery.query.filter[${index}].${key}`, 'must be a valid date');
      }
      bounds.push(eb(`audit_log.${column}`, op, time.toISOString()));
    }
    if (bounds.length === 0) {
      throw new ValidationError(`logsQuery.query.filter[${index}]`, 'must have gte, gt, lte or lt');
    }
    return eb.and(bounds);
  }
  const column = TERM_FIELDS[filter.field as keyof typeof TERM_FIELDS];
  if (!column) {
    throw new ValidationError(path, `must be one of [${Object.keys(TERM_FIELDS).join(', ')}]`);
  }
  if (filter.type === 'terms') return eb(`audit_log.${column}`, 'in', filter.values);
  return eb(`audit_log.${column}`, '=', filter.value);
}

function logRecord(row: {
  id: string;
  occurred_at: string;
  activity_type: string;
  actor_id: string | null;
  object_type: string | null;
  object_id: string | null;
  request_id: string | null;
  data: unknown;
  hash: string;
}): LogRecord {
  return {
    id: row.id,
    time: new Date(row.occurred_at).toISOString(),
    activityType: row.activity_type,
    actorId: row.actor_id,
    objectType: row.object_type,
    objectId: row.object_id,
    requestId: row.request_id,
    data: readJson<Record<string, unknown>>(row.data as string, {}),
    hash: row.hash,
  };
}
