import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { createIndex, createTable } from './frozen/ddl.js';

/**
 * Third-party sign-in (spec: Authentication 5). A sign-in started on one node may finish on another,
 * so its state, nonce and PKCE verifier are a row, not process memory; the row is deleted when the
 * callback uses it (single use) and sweeps remove rows that were never used. Identities remember
 * which provider account signed in to which user, so a later sign-in does not depend on the e-mail.
 */
export function oidc(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createTable(db, d, 'oidc_login_states', {
        state_hash: 'text primary key',
        provider: 'text not null',
        code_verifier: 'text not null',
        nonce: 'text not null',
        binding_hash: 'text not null',
        redirect: 'text',
        created_at: 'timestamp not null',
        expires_at: 'timestamp not null',
      }).execute();
      await createIndex(db, 'oidc_login_states_expires', 'oidc_login_states', ['expires_at']);

      await createTable(db, d, 'oidc_identities', {
        provider: 'text not null',
        subject: 'text not null',
        tenant_id: 'text not null',
        user_id: 'text not null',
        email: 'text not null',
        created_at: 'timestamp not null',
        last_login_at: 'timestamp not null',
      })
        .addPrimaryKeyConstraint('oidc_identities_pk', ['provider', 'subject'])
        .execute();
      await createIndex(db, 'oidc_identities_user', 'oidc_identities', ['user_id']);
    },
  };
}
