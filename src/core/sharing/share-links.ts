import type { ShareRow } from './share-types.js';

/**
 * Where a signed-in user opens a document: the signer page, which shows what they owe on it, or the
 * document as it is to its owner (the "completed" mail).
 */
export function signerPageLink(publicUrl: string, documentId: string): string {
  return `${publicUrl}/sign/${documentId}`;
}

/**
 * The link of a reminder: the signer page for an internal recipient. An external recipient's link
 * is in their invitation: its token is kept only as a hash, so a reminder cannot repeat it, and a new
 * one would end the link they have.
 */
export function reminderLink(
  publicUrl: string,
  share: Pick<ShareRow, 'user_id' | 'document_id'>,
): string | undefined {
  return share.user_id ? signerPageLink(publicUrl, share.document_id) : undefined;
}
