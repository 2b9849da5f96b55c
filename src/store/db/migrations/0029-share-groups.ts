import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { alterTables } from './frozen/ddl.js';

/**
 * Folder shares with groups (issue 41 item 10; a group is an organization of the tenant, as POST
 * /groups/search lists them): `shares.group_id` names the organization whose members a share is for;
 * null for a share with one user or an external recipient.
 */
export function shareGroups(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await alterTables(db, d, {
        shares: { columns: { group_id: 'text' }, indexes: { shares_group: ['group_id'] } },
      });
    },
  };
}
