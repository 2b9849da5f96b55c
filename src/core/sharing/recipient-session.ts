import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { hashToken } from '../identity/secrets.js';
import type { Deps } from '../deps.js';
import type { Database } from '../../store/db/schema.js';
import { shareStanding } from './share-standing.js';
import type { ShareRow } from './share-types.js';

/**
 * Recipient sessions (Contract: Sharing and external recipients). Passing a share's protections
 * (POST /share/unlock, an identity provider's sign-in) never unlocks the link itself: it opens a
 * session bound to that unlock, whose token the recipient's page keeps for its tab. The session is
 * accepted wherever the link is, lasts RECIPIENT_SESSION_MINUTES after its last use and ends with its
 * share (the one rule of share-standing.ts), so a forwarded mail, or a link read over someone's
 * shoulder, opens nothing.
 *
 * ```ts
 * const token = await openRecipientSession(trx, { share, unlocked: true, now, minutes: 60 });
 * // the recipient's next calls send `token` instead of the link
 * ```
 */

const PREFIX = 'shs_';

export function isRecipientSessionToken(token: string): boolean {
  return token.startsWith(PREFIX);
}

/** Opens a session for the share's recipient and answers its token (stored only as a hash). */
export async function openRecipientSession(
  db: Kysely<Database>,
  options: {
    share: Pick<ShareRow, 'id' | 'tenant_id'>;
    /** Every protection of the share passed; false while a password or code is still owed. */
    unlocked: boolean;
    identity?: { provider: string; at: string } | undefined;
    now: Date;
    minutes: number;
  },
): Promise<string> {
  const token = `${PREFIX}${randomBytes(32).toString('base64url')}`;
  const now = options.now.toISOString();
  // Sessions past their time are swept as new ones open, so the table holds about an hour of them.
  await db.deleteFrom('recipient_sessions').where('expires_at', '<=', now).execute();
  await db
    .insertInto('recipient_sessions')
    .values({
      id: randomUUID(),
      token_hash: hashToken(token),
      share_id: options.share.id,
      tenant_id: options.share.tenant_id,
      unlocked: options.unlocked ? 1 : 0,
      identity_provider: options.identity?.provider ?? null,
      identity_verified_at: options.identity?.at ?? null,
      created_at: now,
      last_used_at: now,
      expires_at: expiry(options.now, options.minutes),
    })
    .execute();
  return token;
}

export interface ResolvedSession {
  sessionId: string;
  shareId: string;
  unlocked: boolean;
  identity: { provider: string; at: string } | undefined;
}

/**
 * The live session a token names, its last use moved to now; `undefined` when the token names none,
 * and `'ended'` when it expired or its share ended (the session is then removed).
 */
export async function useRecipientSession(
  deps: Deps,
  token: string,
): Promise<ResolvedSession | 'ended' | undefined> {
  const row = await deps.db
    .selectFrom('recipient_sessions as r')
    .innerJoin('shares as s', 's.id', 'r.share_id')
    .leftJoin('documents as d', 'd.id', 's.document_id')
    .select([
      'r.id',
      'r.share_id',
      'r.unlocked',
      'r.identity_provider',
      'r.identity_verified_at',
      'r.expires_at',
      's.status',
      's.valid_until',
      's.acted_at',
      'd.id as document_id',
      'd.deleted_at',
    ])
    .where('r.token_hash', '=', hashToken(token))
    .executeTakeFirst();
  if (!row) return undefined;
  const now = deps.clock.now();
  const standing = shareStanding(row, {
    documentDeleted: row.document_id === null || row.deleted_at !== null,
    now,
    downloadDays: deps.config.recipientDownloadDays,
  });
  if (new Date(row.expires_at) <= now || standing === 'ended') {
    await deps.db.deleteFrom('recipient_sessions').where('id', '=', row.id).execute();
    return 'ended';
  }
  await deps.db
    .updateTable('recipient_sessions')
    .set({ last_used_at: now.toISOString(), expires_at: expiry(now, deps.config.recipientSessionMinutes) })
    .where('id', '=', row.id)
    .execute();
  return {
    sessionId: row.id,
    shareId: row.share_id,
    unlocked: row.unlocked === 1,
    identity:
      row.identity_provider && row.identity_verified_at
        ? { provider: row.identity_provider, at: row.identity_verified_at }
        : undefined,
  };
}

/** Ends every session of a share (its protections changed: whoever passed the old ones passes the new). */
export async function endRecipientSessions(db: Kysely<Database>, shareId: string): Promise<void> {
  await db.deleteFrom('recipient_sessions').where('share_id', '=', shareId).execute();
}

function expiry(from: Date, minutes: number): string {
  return new Date(from.getTime() + minutes * 60_000).toISOString();
}
