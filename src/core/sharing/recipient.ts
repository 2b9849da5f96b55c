import { randomBytes } from 'node:crypto';
import type { Actor } from '../access/actor.js';
import { hashToken } from '../identity/secrets.js';
import type { Deps } from '../deps.js';
import { MfaRequired, NotFound, Unauthenticated } from '../errors.js';
import { isProtected } from './share-protection.js';
import { isRecipientSessionToken, useRecipientSession } from './recipient-session.js';
import type { ShareRow } from './share-types.js';

/** An external recipient acting through the share link (Contract: the share token is their `token`). */
export interface Recipient {
  shareId: string;
  documentId: string;
  tenantId: string;
  shareTo: string;
  email: string | null;
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

/** Share-link tokens carry a prefix, so authentication knows which table to look in. */
export function newShareToken(): string {
  return `shr_${randomBytes(32).toString('base64url')}`;
}

/** A share-link token or a recipient session token: both are a recipient's `token`. */
export function isShareToken(token: string): boolean {
  return token.startsWith('shr_') || isRecipientSessionToken(token);
}

/**
 * The external recipient a share-link or recipient session token names (Contract: Sharing). The link
 * of a protected share stays locked for whoever holds it, however often its recipient unlocked it:
 * only the session that unlock gave acts. A token naming nothing, or a session that ended, is 401.
 */
export async function resolveShareToken(deps: Deps, token: string, requestId: string): Promise<Recipient> {
  const session = isRecipientSessionToken(token) ? await useRecipientSession(deps, token) : undefined;
  if (session === 'ended') {
    throw new Unauthenticated(
      'The recipient session has ended (unused for too long, or the share is over): open the link again',
    );
  }
  if (isRecipientSessionToken(token) && !session)
    throw new Unauthenticated('The recipient session is not valid');
  const row = await deps.db
    .selectFrom('shares')
    .select(['id', 'document_id', 'tenant_id', 'share_to', 'email', 'password_hash', 'phone', 'options'])
    .$call((q) =>
      session ? q.where('id', '=', session.shareId) : q.where('token_hash', '=', hashToken(token)),
    )
    .executeTakeFirst();
  if (!row) throw new Unauthenticated('The share link is not valid');
  return {
    shareId: row.id,
    documentId: row.document_id,
    tenantId: row.tenant_id,
    shareTo: row.share_to,
    email: row.email,
    unlocked: session ? session.unlocked : !isProtected(row),
    sessionId: session?.sessionId,
    identity: session?.identity,
    requestId,
  };
}

/**
 * The caller's share on a document: the link's own share, or for an internal user their share on
 * that document (the one still owing an action first). A stranger gets "not found".
 */
export async function loadCallerShare(
  deps: Deps,
  caller: RecipientCaller,
  documentId?: string,
): Promise<ShareRow> {
  if (caller.kind === 'external') {
    if (!caller.recipient.unlocked)
      throw new MfaRequired('This share is protected: unlock it with POST /share/unlock');
    if (documentId && documentId !== caller.recipient.documentId) throw new NotFound('No such document');
    const share = await deps.db
      .selectFrom('shares')
      .selectAll()
      .where('id', '=', caller.recipient.shareId)
      .executeTakeFirst();
    if (!share) throw new NotFound('No such share');
    return share;
  }
  if (!documentId) throw new NotFound('No such share');
  const shares = await deps.db
    .selectFrom('shares')
    .selectAll()
    .where('document_id', '=', documentId)
    .where('user_id', '=', caller.actor.userId)
    .where('tenant_id', '=', caller.actor.tenantId)
    .orderBy('created_at', 'desc')
    .execute();
  const share =
    shares.find((s) => s.status === 'active') ?? shares.find((s) => s.status === 'waiting') ?? shares[0];
  if (!share) throw new NotFound('No such document');
  return share;
}

/** The name recorded as the actor of what a caller does (audit `actorId`, event `actor`). */
export function callerName(caller: RecipientCaller): string {
  return caller.kind === 'external' ? caller.recipient.shareTo : caller.actor.name;
}

export function callerRequestId(caller: RecipientCaller): string {
  return caller.kind === 'external' ? caller.recipient.requestId : caller.actor.requestId;
}
