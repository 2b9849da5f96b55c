import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { alterTables } from './frozen/ddl.js';

/**
 * Webhook secret rotation and response excerpts (issue 27, item 3):
 * - `webhooks.previous_hmac_secret`: the secret a rotation replaced, kept (as given, like
 *   `hmac_secret`: signing needs it) only until `previous_secret_until`; deliveries are signed with
 *   both meanwhile, and both columns are cleared once that time has passed;
 * - `webhook_attempts.response_excerpt`: the first bytes of the receiver's answer, as text.
 */
export function webhookRotation(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await alterTables(db, d, {
        webhooks: { columns: { previous_hmac_secret: 'text', previous_secret_until: 'timestamp' } },
        webhook_attempts: { columns: { response_excerpt: 'text' } },
      });
    },
  };
}
