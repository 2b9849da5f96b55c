import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { createTables, SIGN_IN_FLOW } from './frozen/ddl.js';

/**
 * Third-party sign-in (spec: Authentication 5). A sign-in started on one node may finish on another,
 * so its state, nonce and PKCE verifier are a row, not process memory; the row is deleted when the
 * callback uses it (single use) and sweeps remove rows that were never used. Identities remember
 * which provider account signed in to which user, so a later sign-in does not depend on the e-mail.
 */
export function oidc(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createTables(db, d, {
        oidc_login_states: {
          columns: { state_hash: 'text primary key', ...SIGN_IN_FLOW },
          indexes: { oidc_login_states_expires: ['expires_at'] },
        },
        oidc_identities: {
          columns: {
            provider: 'text not null',
            subject: 'text not null',
            tenant_id: 'text not null',
            user_id: 'text not null',
            email: 'text not null',
            created_at: 'timestamp not null',
            last_login_at: 'timestamp not null',
          },
          primaryKey: ['provider', 'subject'],
          indexes: { oidc_identities_user: ['user_id'] },
        },
      });
    },
  };
}
