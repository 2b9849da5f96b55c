import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { RateLimitStore, WindowCount } from './rate-limit-store.js';

/** Rows per statement: 3 parameters each, well under SQLite's 32,766 and PostgreSQL's 65,535. */
const ROWS_PER_STATEMENT = 500;

/**
 * Rate-limit counts in the `rate_limit_windows` table, shared by every node on the same database.
 * Each node writes about once a second, one upsert for all the buckets it counted (never once per
 * request), and reads the totals back from the same statement.
 *
 * ```ts
 * const store = new DatabaseRateLimitStore(db);
 * const [total] = await store.add([{ bucket, windowStartMs, delta: 3 }], 60_000);
 * ```
 */
export class DatabaseRateLimitStore implements RateLimitStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async add(counts: readonly WindowCount[]): Promise<number[]> {
    // Every node locks the rows it updates in the same order, so two nodes' additions never deadlock
    // on PostgreSQL (each waits for the other's row otherwise).
    const ordered = [...counts].sort((x, y) =>
      x.bucket === y.bucket ? x.windowStartMs - y.windowStartMs : x.bucket < y.bucket ? -1 : 1,
    );
    const totals = new Map<string, number>();
    for (let i = 0; i < ordered.length; i += ROWS_PER_STATEMENT) {
      const rows = await this.#db
        .insertInto('rate_limit_windows')
        .values(
          ordered.slice(i, i + ROWS_PER_STATEMENT).map((c) => ({
            bucket: c.bucket,
            window_start_ms: c.windowStartMs,
            count: c.delta,
          })),
        )
        .onConflict((oc) =>
          oc.columns(['bucket', 'window_start_ms']).doUpdateSet((eb) => ({
            count: eb('rate_limit_windows.count', '+', eb.ref('excluded.count')),
          })),
        )
        .returning(['bucket', 'window_start_ms', 'count'])
        .execute();
      for (const row of rows) totals.set(`${row.bucket}/${Number(row.window_start_ms)}`, row.count);
    }
    return counts.map((c) => totals.get(`${c.bucket}/${c.windowStartMs}`) ?? c.delta);
  }

  async sweep(beforeMs: number): Promise<void> {
    await this.#db.deleteFrom('rate_limit_windows').where('window_start_ms', '<', beforeMs).execute();
  }

  async close(): Promise<void> {
    // The database belongs to the app, which closes it.
  }
}
