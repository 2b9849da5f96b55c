import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { createTables, TIMESTAMPS } from './frozen/ddl.js';

/** Shares: one row per recipient of a document (spec Sharing; Contract: external recipients). */
export function sharing(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createTables(db, d, {
        shares: {
          columns: {
            id: 'text primary key',
            tenant_id: 'text not null',
            document_id: 'text not null',
            share_group: 'text not null',
            shared_by: 'text not null',
            purpose: 'text not null',
            share_to: 'text not null',
            user_id: 'text',
            email: 'text',
            token_hash: 'text unique',
            status: 'text not null',
            sequential: 'integer not null',
            position: 'integer not null',
            message: 'text',
            valid_until: 'timestamp',
            password_hash: 'text',
            phone: 'text',
            unlocked: 'integer not null',
            otp_hash: 'text',
            otp_expires_at: 'timestamp',
            options: 'json not null',
            next_reminder_at: 'timestamp',
            last_reminder_at: 'timestamp',
            message_read: 'integer not null default 0',
            delegated_from: 'text',
            acted_at: 'timestamp',
            reason: 'text',
            ...TIMESTAMPS,
          },
          indexes: {
            shares_document: ['document_id', 'status'],
            shares_user: ['user_id', 'status'],
            shares_reminder: ['next_reminder_at'],
            shares_valid_until: ['valid_until'],
          },
        },
      });
    },
  };
}
