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
 * SQLite has one writer at a time (writeTransaction takes the write lock up front), so rows get
 * their rowid in commit order and a rowid, once visible, never has an unseen smaller one before it:
 * the cursor is the last rowid listed.
 */
export const sqliteEventFeed: EventFeed = Object.freeze({
  async read(db: Kysely<Database>, query: FeedQuery): Promise<FeedEvent[]> {
    const after = query.after ? Number(decodeCursor(query.after, /^r([0-9]{1,18})$/)[1]) : 0;
    const rows = await feedScope(db, query)
      .select([sql<number>`rowid`.as('position'), ...FEED_COLUMNS])
      .where(sql<boolean>`rowid > ${after}`)
      .orderBy(sql`rowid`)
      .limit(query.limit)
      .execute();
    return rows.map((row) => feedEvent(row, encodeCursor(`r${row.position}`)));
  },
});
