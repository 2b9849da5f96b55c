import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { alterTables } from './frozen/ddl.js';

/**
 * Fractional scroll timeouts (issue 41 item 10; spec Reports: `scroll.timeout` is a number of seconds):
 * `scroll_contexts.timeout_ms` keeps the timeout a scroll is refreshed with to the millisecond. Rows
 * written before it have null and are refreshed with `timeout_seconds`.
 */
export function scrollTimeoutMs(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await alterTables(db, d, { scroll_contexts: { columns: { timeout_ms: 'integer' } } });
    },
  };
}
