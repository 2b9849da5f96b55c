import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';

/** Shares: one row per recipient of a document (spec Sharing; Contract: external recipients). */
export function sharing(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('shares')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('document_id', 'text', (c) => c.notNull())
        .addColumn('share_group', 'text', (c) => c.notNull())
        .addColumn('shared_by', 'text', (c) => c.notNull())
        .addColumn('purpose', 'text', (c) => c.notNull())
        .addColumn('share_to', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text')
        .addColumn('email', 'text')
        .addColumn('token_hash', 'text', (c) => c.unique())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('sequential', 'integer', (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('message', 'text')
        .addColumn('valid_until', d.timestampType)
        .addColumn('password_hash', 'text')
        .addColumn('phone', 'text')
        .addColumn('unlocked', 'integer', (c) => c.notNull())
        .addColumn('otp_hash', 'text')
        .addColumn('otp_expires_at', d.timestampType)
        .addColumn('options', d.jsonType, (c) => c.notNull())
        .addColumn('next_reminder_at', d.timestampType)
        .addColumn('last_reminder_at', d.timestampType)
        .addColumn('message_read', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('delegated_from', 'text')
        .addColumn('acted_at', d.timestampType)
        .addColumn('reason', 'text')
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .addColumn('updated_at', d.timestampType, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('shares_document')
        .on('shares')
        .columns(['document_id', 'status'])
        .execute();
      await db.schema.createIndex('shares_user').on('shares').columns(['user_id', 'status']).execute();
      await db.schema.createIndex('shares_reminder').on('shares').column('next_reminder_at').execute();
      await db.schema.createIndex('shares_valid_until').on('shares').column('valid_until').execute();
    },
  };
}
