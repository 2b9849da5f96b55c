import type { Actor } from './actor.js';

/*
 * Who calls a recipient endpoint (core/sharing/recipient.ts resolves them): an external recipient by
 * the share link, or a user by session. Beside the actor, as every floor of core/ may need to know it.
 */

/** An external recipient acting through the share link (Contract: the share token is their `token`). */
export interface Recipient {
  shareId: string;
  documentId: string;
  tenantId: string;
  shareTo: string;
  email: string | null;
  /**
   * What the token may do: `live` acts on the recipient endpoints; `completed` (the recipient acted,
   * within RECIPIENT_DOWNLOAD_DAYS) only downloads what they signed (share-standing.ts).
   */
  standing: 'live' | 'completed';
  /**
   * Whether the caller may act: through the link only when the share has no protection at all,
   * through a recipient session once every protection was passed in it.
   */
  unlocked: boolean;
  /** The recipient session the caller sent, when not the link itself. */
  sessionId?: string | undefined;
  /** The identity the caller's session proved at one of the share's identity providers. */
  identity?: { provider: string; at: string } | undefined;
  requestId: string;
}

/** Who acts on a recipient endpoint: an external recipient by link, or an internal user by session. */
export type RecipientCaller = { kind: 'external'; recipient: Recipient } | { kind: 'internal'; actor: Actor };

/** The name recorded as the actor of what a caller does (audit `actorId`, event `actor`). */
export function callerName(caller: RecipientCaller): string {
  return caller.kind === 'external' ? caller.recipient.shareTo : caller.actor.name;
}

export function callerRequestId(caller: RecipientCaller): string {
  return caller.kind === 'external' ? caller.recipient.requestId : caller.actor.requestId;
}
