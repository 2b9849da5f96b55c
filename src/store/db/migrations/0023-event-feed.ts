import { sql, type Kysely, type Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { createIndex } from './frozen/ddl.js';

/**
 * The events feed (GET /events, issue 27): a poller reads a tenant's events after a cursor and must
 * never miss one. SQLite orders them by rowid (one writer at a time: commit order), indexed by
 * tenant. PostgreSQL records the writing transaction's id and a sequence with each event, so that
 * the feed lists only events of finished transactions, in (transaction, sequence) order.
 */
export function eventFeed(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (d.name === 'postgres') {
        await sql`alter table events add column feed_xid xid8 not null default pg_current_xact_id()`.execute(
          db,
        );
        await sql`alter table events add column feed_seq bigserial`.execute(db);
        await createIndex(db, 'events_feed', 'events', ['tenant_id', 'feed_xid', 'feed_seq']);
      } else {
        await createIndex(db, 'events_feed', 'events', ['tenant_id']);
      }
    },
  };
}
