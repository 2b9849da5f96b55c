import { sql, type Kysely, type Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { createTables } from './frozen/ddl.js';

/**
 * Every link a share's recipient received stays valid while the share is live (issue 37, item 9): a
 * reminder used to overwrite the share's one `token_hash`, so the invitation's link died with the
 * first reminder. Links now have a table of their own, one row per link sent; the share's standing
 * decides for all of them at once (core/sharing/share-standing.ts). The links issued so far move
 * there; `shares.token_hash` stays as an always-empty column (SQLite cannot drop a UNIQUE column
 * without rebuilding the table).
 */
export function shareLinksPerShare(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createTables(db, d, {
        share_links: {
          columns: {
            token_hash: 'text primary key',
            share_id: 'text not null',
            tenant_id: 'text not null',
            created_at: 'timestamp not null',
          },
          indexes: { share_links_share: ['share_id'] },
        },
      });
      await sql`insert into share_links (token_hash, share_id, tenant_id, created_at)
        select token_hash, id, tenant_id, updated_at from shares where token_hash is not null`.execute(db);
      await sql`update shares set token_hash = null where token_hash is not null`.execute(db);
    },
  };
}
