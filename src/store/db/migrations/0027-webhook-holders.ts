import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { addColumns } from './frozen/ddl.js';

/**
 * A webhook is held by a user entitled to it (issue 37, item 7): `paused_at` says since when no one
 * entitled holds it (its holder lost the right, left its scope, was suspended or deleted); nothing is
 * delivered to it meanwhile.
 */
export function webhookHolders(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await addColumns(db, d, 'webhooks', { paused_at: 'timestamp' });
    },
  };
}
