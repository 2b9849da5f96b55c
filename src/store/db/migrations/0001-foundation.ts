import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { createTables, TIMESTAMPS } from './frozen/ddl.js';

/** Tenants, organizations, users, credentials, login throttling and the audit log. */
export function foundation(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createTables(db, d, {
        tenants: {
          columns: {
            id: 'text primary key',
            name: 'text not null unique',
            properties: 'json not null',
            counters: 'json not null',
            created_at: 'timestamp not null',
          },
        },
        organizations: {
          columns: {
            id: 'text primary key',
            tenant_id: 'text not null references tenants.id',
            name: 'text not null',
            created_at: 'timestamp not null',
          },
          unique: { organizations_tenant_name: ['tenant_id', 'name'] },
        },
        users: {
          columns: {
            id: 'text primary key',
            tenant_id: 'text not null references tenants.id',
            organization_id: 'text not null references organizations.id',
            name: 'text not null',
            display_name: 'text',
            email: 'text',
            password_hash: 'text',
            role: 'text not null',
            rights: 'json not null',
            status: 'text not null',
            photo: 'text',
            config: 'json not null',
            mfa_secret: 'text',
            mfa_enabled: 'integer not null default 0',
            created_by: 'text',
            ...TIMESTAMPS,
          },
          unique: { users_tenant_name: ['tenant_id', 'name'] },
          indexes: { users_organization: ['organization_id'] },
        },
        auth_tokens: {
          columns: {
            id: 'text primary key',
            token_hash: 'text not null unique',
            kind: 'text not null',
            user_id: 'text not null references users.id on delete cascade',
            tenant_id: 'text not null',
            unlocked: 'integer not null',
            prefix: 'text unique',
            description: 'text',
            created_at: 'timestamp not null',
            expires_at: 'timestamp not null',
            last_used_at: 'timestamp',
          },
          indexes: { auth_tokens_user: ['user_id', 'kind'] },
        },
        recovery_codes: {
          columns: {
            id: 'text primary key',
            user_id: 'text not null references users.id on delete cascade',
            code_hash: 'text not null',
            used_at: 'timestamp',
          },
          indexes: { recovery_codes_user: ['user_id'] },
        },
        activation_tokens: {
          columns: {
            token_hash: 'text primary key',
            user_id: 'text not null references users.id on delete cascade',
            expires_at: 'timestamp not null',
          },
        },
        login_failures: {
          columns: {
            key: 'text primary key',
            failures: 'integer not null',
            window_start: 'timestamp not null',
          },
        },
        audit_log: {
          columns: {
            seq: 'serial primary key',
            id: 'text not null unique',
            tenant_id: 'text not null',
            occurred_at: 'timestamp not null',
            actor_id: 'text',
            activity_type: 'text not null',
            object_type: 'text',
            object_id: 'text',
            request_id: 'text',
            data: 'json not null',
          },
          indexes: { audit_log_tenant_seq: ['tenant_id', 'seq'] },
        },
      });
    },
  };
}
