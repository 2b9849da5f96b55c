import type { Kysely } from 'kysely';
import { ValidationError } from '../../base/errors.js';
import type { Database } from './schema.js';

/** An event as the feed lists it. */
export interface FeedEvent {
  id: string;
  organizationId: string;
  documentId: string;
  event: string;
  actor: string;
  occurredAt: string;
  /** The cursor that asks for what comes after this event. */
  cursor: string;
}

/** Whose events, after which cursor, how many. */
export interface FeedQuery {
  tenantId: string;
  /** Only this organization's events (otherwise the whole tenant's). */
  organizationId?: string | undefined;
  after?: string | undefined;
  limit: number;
}

/**
 * The events feed (GET /events): a tenant's events (or an organization's) in the order they became
 * visible, after a keyset cursor, so that a poller never misses one and never sees one twice, whichever
 * node it asks. Each dialect says how "after" is made safe against transactions that commit out of
 * order (store/db/<dialect>/event-feed.ts).
 */
export interface EventFeed {
  read(db: Kysely<Database>, query: FeedQuery): Promise<FeedEvent[]>;
}

/** The columns of `events` an entry of the feed shows. */
export const FEED_COLUMNS = [
  'id',
  'organization_id',
  'document_id',
  'event',
  'actor',
  'occurred_at',
] as const;

/** The events of the query's tenant (or organization), as a query to order and page. */
export function feedScope(db: Kysely<Database>, query: FeedQuery) {
  const tenant = db.selectFrom('events').where('tenant_id', '=', query.tenantId);
  return query.organizationId === undefined
    ? tenant
    : tenant.where('organization_id', '=', query.organizationId);
}

/** A row of `events` as the feed lists it, with the cursor for what comes after it. */
export function feedEvent(
  row: {
    id: string;
    organization_id: string;
    document_id: string;
    event: string;
    actor: string;
    occurred_at: string | Date;
  },
  cursor: string,
): FeedEvent {
  return {
    id: row.id,
    organizationId: row.organization_id,
    documentId: row.document_id,
    event: row.event,
    actor: row.actor,
    occurredAt: new Date(row.occurred_at).toISOString(),
    cursor,
  };
}

/** A cursor as the feed hands it out: opaque, URL-safe. */
export function encodeCursor(position: string): string {
  return Buffer.from(position, 'utf8').toString('base64url');
}

/** The position a cursor stands for, if it has the shape `pattern` expects; else 400. */
export function decodeCursor(cursor: string, pattern: RegExp): RegExpExecArray {
  const position = /^[A-Za-z0-9_-]{1,200}$/.test(cursor)
    ? Buffer.from(cursor, 'base64url').toString('utf8')
    : '';
  const parsed = pattern.exec(position);
  if (!parsed) throw new ValidationError('after', 'must be a cursor this feed gave (its `cursor`)');
  return parsed;
}
