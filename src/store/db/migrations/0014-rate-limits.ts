import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { createTables } from './frozen/ddl.js';

/**
 * Request counts of the rate limits (issue 21: rate limits an integrator can see), shared by the
 * nodes of an installation. A row counts one bucket's requests in one fixed window:
 * - `bucket`: SHA-256 (hex) of the policy and what it limits (an API key's or session's id, a
 *   recipient's share or session, a client address); never a token itself;
 * - `window_start_ms`: the window's start in milliseconds since the epoch (windows are aligned on
 *   multiples of their length, so every node names the same window alike);
 * - `count`: requests counted so far. Nodes add what they counted locally about once a second, so a
 *   request never waits for a write; rows of past windows are deleted.
 */
export function rateLimits(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createTables(db, d, {
        rate_limit_windows: {
          columns: { bucket: 'text not null', window_start_ms: 'bigint not null', count: 'integer not null' },
          primaryKey: ['bucket', 'window_start_ms'],
          indexes: { rate_limit_windows_start: ['window_start_ms'] },
        },
      });
    },
  };
}
