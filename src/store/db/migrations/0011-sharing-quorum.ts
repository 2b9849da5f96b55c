import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { alterTables, createTables, SIGN_IN_FLOW } from './frozen/ddl.js';

/**
 * Sign-entity quorum and identity-provider protection of shares (issue 5).
 * - `sign_entity`/`quorum`: a sign share that belongs to a sign entity (spec: Sign entity) names it
 *   (`id:<userRoleId>` or `name:<userRoleName>`, within its share group) with the entity's quorum, so
 *   the workflow counts the entity's signatures in SQL.
 * - `identity_provider`/`identity_verified_at`: which of the share's `allowedOAuths` proved the
 *   recipient's identity, and when (spec: Authentication 6, Sharing rule 3).
 * - `share_oidc_states`: a recipient's sign-in at an identity provider between its start and its
 *   callback, used once, like `oidc_login_states` for users (kept apart so neither callback can
 *   finish the other's flow).
 */
export function sharingQuorum(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await alterTables(db, d, {
        shares: {
          columns: {
            sign_entity: 'text',
            quorum: 'integer',
            identity_provider: 'text',
            identity_verified_at: 'timestamp',
          },
          indexes: { shares_sign_entity: ['document_id', 'share_group', 'sign_entity'] },
        },
      });

      await createTables(db, d, {
        share_oidc_states: {
          columns: { state_hash: 'text primary key', share_id: 'text not null', ...SIGN_IN_FLOW },
          indexes: { share_oidc_states_expires: ['expires_at'] },
        },
      });
    },
  };
}
