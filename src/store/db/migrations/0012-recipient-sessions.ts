import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';

/**
 * Recipient sessions (issue 20; Contract: Sharing and external recipients). Unlocking a protected
 * share no longer unlocks its link: it opens a session bound to that unlock, so a forwarded mail opens
 * nothing. Whether a link is locked now follows from the share's protections alone, so the stored
 * `shares.unlocked` flag, which an edit could flip, goes.
 * - `token_hash`: SHA-256 of the session token (never stored itself);
 * - `identity_provider`/`identity_verified_at`: the identity this session proved (a share with
 *   `allowedOAuths` and a password takes both within one session);
 * - `unlocked`: every protection of the share passed;
 * - `expires_at`: its last use plus RECIPIENT_SESSION_MINUTES, moved on with each use.
 */
export function recipientSessions(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('recipient_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('share_id', 'text', (c) => c.notNull())
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('unlocked', 'integer', (c) => c.notNull())
        .addColumn('identity_provider', 'text')
        .addColumn('identity_verified_at', d.timestampType)
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .addColumn('last_used_at', d.timestampType, (c) => c.notNull())
        .addColumn('expires_at', d.timestampType, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('recipient_sessions_share')
        .on('recipient_sessions')
        .column('share_id')
        .execute();
      await db.schema
        .createIndex('recipient_sessions_expires')
        .on('recipient_sessions')
        .column('expires_at')
        .execute();
      await db.schema.alterTable('shares').dropColumn('unlocked').execute();
    },
  };
}
