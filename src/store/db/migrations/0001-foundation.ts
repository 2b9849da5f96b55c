import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { createIndex, createTable } from './frozen/ddl.js';

/** Tenants, organizations, users, credentials, login throttling and the audit log. */
export function foundation(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createTable(db, d, 'tenants', {
        id: 'text primary key',
        name: 'text not null unique',
        properties: 'json not null',
        counters: 'json not null',
        created_at: 'timestamp not null',
      }).execute();

      await createTable(db, d, 'organizations', {
        id: 'text primary key',
        tenant_id: 'text not null references tenants.id',
        name: 'text not null',
        created_at: 'timestamp not null',
      })
        .addUniqueConstraint('organizations_tenant_name', ['tenant_id', 'name'])
        .execute();

      await createTable(db, d, 'users', {
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
        created_at: 'timestamp not null',
        updated_at: 'timestamp not null',
      })
        .addUniqueConstraint('users_tenant_name', ['tenant_id', 'name'])
        .execute();
      await createIndex(db, 'users_organization', 'users', ['organization_id']);

      await createTable(db, d, 'auth_tokens', {
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
      }).execute();
      await createIndex(db, 'auth_tokens_user', 'auth_tokens', ['user_id', 'kind']);

      await createTable(db, d, 'recovery_codes', {
        id: 'text primary key',
        user_id: 'text not null references users.id on delete cascade',
        code_hash: 'text not null',
        used_at: 'timestamp',
      }).execute();
      await createIndex(db, 'recovery_codes_user', 'recovery_codes', ['user_id']);

      await createTable(db, d, 'activation_tokens', {
        token_hash: 'text primary key',
        user_id: 'text not null references users.id on delete cascade',
        expires_at: 'timestamp not null',
      }).execute();

      await createTable(db, d, 'login_failures', {
        key: 'text primary key',
        failures: 'integer not null',
        window_start: 'timestamp not null',
      }).execute();

      await createTable(db, d, 'audit_log', {
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
      }).execute();
      await createIndex(db, 'audit_log_tenant_seq', 'audit_log', ['tenant_id', 'seq']);
    },
  };
}
