import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { addColumns, createIndex, createTable } from './frozen/ddl.js';

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
      await addColumns(db, d, 'shares', {
        sign_entity: 'text',
        quorum: 'integer',
        identity_provider: 'text',
        identity_verified_at: 'timestamp',
      });
      await createIndex(db, 'shares_sign_entity', 'shares', ['document_id', 'share_group', 'sign_entity']);

      await createTable(db, d, 'share_oidc_states', {
        state_hash: 'text primary key',
        share_id: 'text not null',
        provider: 'text not null',
        code_verifier: 'text not null',
        nonce: 'text not null',
        binding_hash: 'text not null',
        redirect: 'text',
        created_at: 'timestamp not null',
        expires_at: 'timestamp not null',
      }).execute();
      await createIndex(db, 'share_oidc_states_expires', 'share_oidc_states', ['expires_at']);
    },
  };
}
