import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { createTables } from './frozen/ddl.js';

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
      await createTables(db, d, {
        recipient_sessions: {
          columns: {
            id: 'text primary key',
            token_hash: 'text not null unique',
            share_id: 'text not null',
            tenant_id: 'text not null',
            unlocked: 'integer not null',
            identity_provider: 'text',
            identity_verified_at: 'timestamp',
            created_at: 'timestamp not null',
            last_used_at: 'timestamp not null',
            expires_at: 'timestamp not null',
          },
          indexes: {
            recipient_sessions_share: ['share_id'],
            recipient_sessions_expires: ['expires_at'],
          },
        },
      });
      await db.schema.alterTable('shares').dropColumn('unlocked').execute();
    },
  };
}
