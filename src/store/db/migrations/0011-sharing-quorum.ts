import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';

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
      await db.schema.alterTable('shares').addColumn('sign_entity', 'text').execute();
      await db.schema.alterTable('shares').addColumn('quorum', 'integer').execute();
      await db.schema.alterTable('shares').addColumn('identity_provider', 'text').execute();
      await db.schema.alterTable('shares').addColumn('identity_verified_at', d.timestampType).execute();
      await db.schema
        .createIndex('shares_sign_entity')
        .on('shares')
        .columns(['document_id', 'share_group', 'sign_entity'])
        .execute();

      await db.schema
        .createTable('share_oidc_states')
        .addColumn('state_hash', 'text', (c) => c.primaryKey())
        .addColumn('share_id', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('code_verifier', 'text', (c) => c.notNull())
        .addColumn('nonce', 'text', (c) => c.notNull())
        .addColumn('binding_hash', 'text', (c) => c.notNull())
        .addColumn('redirect', 'text')
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .addColumn('expires_at', d.timestampType, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('share_oidc_states_expires')
        .on('share_oidc_states')
        .column('expires_at')
        .execute();
    },
  };
}
