import { sql, type Kysely } from 'kysely';
import {
  decodeCursor,
  encodeCursor,
  FEED_COLUMNS,
  feedEvent,
  feedScope,
  type EventFeed,
  type FeedEvent,
  type FeedQuery,
} from '../event-feed.js';
import type { Database } from '../schema.js';

/**
 * PostgreSQL runs writers side by side, and a sequence value or a time is taken before its
 * transaction commits: a row can become visible after rows with larger ones, and a poller that had
 * moved past it would miss it. Each event therefore carries the id of the transaction that wrote it
 * (`feed_xid`, migration 0023) and the feed lists only events of transactions older than every one
 * still running (`pg_snapshot_xmin`): those are all finished, and any later event has a larger
 * transaction id. Ordered by (transaction, sequence); the cursor is the last pair listed.
 */
export const postgresEventFeed: EventFeed = Object.freeze({
  async read(db: Kysely<Database>, query: FeedQuery): Promise<FeedEvent[]> {
    const after = query.after ? decodeCursor(query.after, /^x([0-9]{1,20})\.([0-9]{1,19})$/) : undefined;
    const rows = await feedScope(db, query)
      .select([sql<string>`feed_xid::text`.as('xid'), sql<string>`feed_seq::text`.as('seq'), ...FEED_COLUMNS])
      .$if(after !== undefined, (q) =>
        q.where(sql<boolean>`(feed_xid, feed_seq) > (${after![1]}::xid8, ${after![2]}::bigint)`),
      )
      .where(sql<boolean>`feed_xid < pg_snapshot_xmin(pg_current_snapshot())`)
      .orderBy(sql`feed_xid`)
      .orderBy(sql`feed_seq`)
      .limit(query.limit)
      .execute();
    return rows.map((row) => feedEvent(row, encodeCursor(`x${row.xid}.${row.seq}`)));
  },
});
