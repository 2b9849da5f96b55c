import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';

/**
 * Third-party sign-in (spec: Authentication 5). A sign-in started on one node may finish on another,
 * so its state, nonce and PKCE verifier are a row, not process memory; the row is deleted when the
 * callback uses it (single use) and sweeps remove rows that were never used. Identities remember
 * which provider account signed in to which user, so a later sign-in does not depend on the e-mail.
 */
export function oidc(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('oidc_login_states')
        .addColumn('state_hash', 'text', (c) => c.primaryKey())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('code_verifier', 'text', (c) => c.notNull())
        .addColumn('nonce', 'text', (c) => c.notNull())
        .addColumn('binding_hash', 'text', (c) => c.notNull())
        .addColumn('redirect', 'text')
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .addColumn('expires_at', d.timestampType, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('oidc_login_states_expires')
        .on('oidc_login_states')
        .column('expires_at')
        .execute();

      await db.schema
        .createTable('oidc_identities')
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .addColumn('last_login_at', d.timestampType, (c) => c.notNull())
        .addPrimaryKeyConstraint('oidc_identities_pk', ['provider', 'subject'])
        .execute();
      await db.schema.createIndex('oidc_identities_user').on('oidc_identities').column('user_id').execute();
    },
  };
}
