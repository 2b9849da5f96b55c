import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';

/** Tenants, organizations, users, credentials, login throttling and the audit log. */
export function foundation(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('tenants')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('properties', d.jsonType, (c) => c.notNull())
        .addColumn('counters', d.jsonType, (c) => c.notNull())
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('organizations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .addUniqueConstraint('organizations_tenant_name', ['tenant_id', 'name'])
        .execute();

      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('display_name', 'text')
        .addColumn('email', 'text')
        .addColumn('password_hash', 'text')
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('rights', d.jsonType, (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('photo', 'text')
        .addColumn('config', d.jsonType, (c) => c.notNull())
        .addColumn('mfa_secret', 'text')
        .addColumn('mfa_enabled', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_by', 'text')
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .addColumn('updated_at', d.timestampType, (c) => c.notNull())
        .addUniqueConstraint('users_tenant_name', ['tenant_id', 'name'])
        .execute();
      await db.schema.createIndex('users_organization').on('users').column('organization_id').execute();

      await db.schema
        .createTable('auth_tokens')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('unlocked', 'integer', (c) => c.notNull())
        .addColumn('prefix', 'text', (c) => c.unique())
        .addColumn('description', 'text')
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .addColumn('expires_at', d.timestampType, (c) => c.notNull())
        .addColumn('last_used_at', d.timestampType)
        .execute();
      await db.schema
        .createIndex('auth_tokens_user')
        .on('auth_tokens')
        .columns(['user_id', 'kind'])
        .execute();

      await db.schema
        .createTable('recovery_codes')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('code_hash', 'text', (c) => c.notNull())
        .addColumn('used_at', d.timestampType)
        .execute();
      await db.schema.createIndex('recovery_codes_user').on('recovery_codes').column('user_id').execute();

      await db.schema
        .createTable('activation_tokens')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('expires_at', d.timestampType, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('login_failures')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('failures', 'integer', (c) => c.notNull())
        .addColumn('window_start', d.timestampType, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('audit_log')
        .addColumn('seq', d.serialType, (c) =>
          d.name === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey(),
        )
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('occurred_at', d.timestampType, (c) => c.notNull())
        .addColumn('actor_id', 'text')
        .addColumn('activity_type', 'text', (c) => c.notNull())
        .addColumn('object_type', 'text')
        .addColumn('object_id', 'text')
        .addColumn('request_id', 'text')
        .addColumn('data', d.jsonType, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('audit_log_tenant_seq')
        .on('audit_log')
        .columns(['tenant_id', 'seq'])
        .execute();
    },
  };
}
