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
 * recipient a new share link, since a token is kept only as a hash and cannot be repeated. The share's
 * earlier link stops working (a recipient session already open goes on): the newest message holds
 * the one that works, and says so.
 */
export async function freshRecipientLink(
  trx: Kysely<Database>,
  publicUrl: string,
  share: Pick<ShareRow, 'id' | 'user_id' | 'document_id'>,
): Promise<string> {
  if (share.user_id) return signerPageLink(publicUrl, share.document_id);
  const token = newShareToken();
  await trx
    .updateTable('shares')
    .set({ token_hash: hashToken(token) })
    .where('id', '=', share.id)
    .execute();
  return `${publicUrl}/s/${token}`;
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
