import type { Kysely } from 'kysely';
import type { Database } from '../../store/db/schema.js';
import { hashToken } from '../identity/secrets.js';
import { newShareToken } from './recipient.js';
import type { ShareRow } from './share-types.js';

/**
 * Where a signed-in user opens a document: the signer page, which shows what they owe on it, or the
 * document as it is to its owner (the "completed" mail).
 */
export function signerPageLink(publicUrl: string, documentId: string): string {
  return `${publicUrl}/sign/${documentId}`;
}

/**
 * A link that opens the share for its recipient now: the signer page for a user; for an external
 * recipient a new share link, since a token is kept only as a hash and cannot be repeated. Links sent
 * earlier (the invitation, earlier reminders) keep working: whichever mail the recipient opens first
 * opens the share, and all of them end with it (share-standing.ts).
 */
export async function freshRecipientLink(
  trx: Kysely<Database>,
  publicUrl: string,
  share: Pick<ShareRow, 'id' | 'tenant_id' | 'user_id' | 'document_id'>,
  now: Date,
): Promise<string> {
  if (share.user_id) return signerPageLink(publicUrl, share.document_id);
  return `${publicUrl}/s/${await issueShareLink(trx, share, now)}`;
}

/** Issues one more link token for a share (stored only as its hash) and answers the token. */
export async function issueShareLink(
  trx: Kysely<Database>,
  share: Pick<ShareRow, 'id' | 'tenant_id'>,
  now: Date,
): Promise<string> {
  const token = newShareToken();
  await trx
    .insertInto('share_links')
    .values({
      token_hash: hashToken(token),
      share_id: share.id,
      tenant_id: share.tenant_id,
      created_at: now.toISOString(),
    })
    .execute();
  return token;
}

/** Ends every link of a share at once (it moved to another recipient, or was withdrawn). */
export async function revokeShareLinks(trx: Kysely<Database>, shareId: string): Promise<void> {
  await trx.deleteFrom('share_links').where('share_id', '=', shareId).execute();
}

/** The person a share's messages speak for: who shared it, by the name they show and their address. */
export interface Sharer {
  name: string;
  email: string | null;
}

/** Who shared a share (its `shared_by`); undefined when that user is gone. */
export async function sharerOf(db: Kysely<Database>, userId: string): Promise<Sharer | undefined> {
  const user = await db
    .selectFrom('users')
    .select(['name', 'display_name', 'email'])
    .where('id', '=', userId)
    .executeTakeFirst();
  return user ? { name: user.display_name ?? user.name, email: user.email } : undefined;
}
