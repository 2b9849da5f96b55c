import { randomBytes } from 'node:crypto';
import { hashToken } from '../identity/secrets.js';
import type { Deps } from '../deps.js';
import { MfaRequired, NotFound, Unauthenticated } from '../../base/errors.js';
import { isProtected } from './share-protection.js';
import { isRecipientSessionToken, useRecipientSession } from './recipient-session.js';
import { downloadableUntil, shareStanding } from './share-standing.js';
import type { Recipient, RecipientCaller } from '../access/recipient-caller.js';
import { shareOptions, type ShareRow } from './share-types.js';

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
 * only the session that unlock gave acts. Every link a recipient received for a share (invitation,
 * reminders) and every session opened from them follow one rule (share-standing.ts): live while the
 * share is, download-only for a while after the recipient acted, then nothing. A token naming nothing,
 * a session that ended, or a share that ended is 401.
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
  const found = await shareWithStanding(
    deps,
    session ? { shareId: session.shareId } : { linkHash: hashToken(token) },
  );
  if (!found) throw new Unauthenticated('The share link is not valid');
  const { row, standing } = found;
  if (standing === 'ended') {
    throw new Unauthenticated(
      'This share has ended (expired, cancelled, rejected, delegated, completed long ago, or its document deleted): the link no longer opens it',
    );
  }
  return {
    shareId: row.id,
    documentId: row.document_id,
    tenantId: row.tenant_id,
    shareTo: row.share_to,
    email: row.email,
    standing,
    unlocked: session ? session.unlocked : !isProtected(row),
    sessionId: session?.sessionId,
    identity: session?.identity,
    requestId,
  };
}

/** The share a credential names, read with what decides its standing (share-standing.ts). */
async function shareWithStanding(deps: Deps, by: { shareId: string } | { linkHash: string }) {
  const row = await deps.db
    .selectFrom('shares as s')
    .leftJoin('documents as d', 'd.id', 's.document_id')
    .select([
      's.id',
      's.document_id',
      's.tenant_id',
      's.share_to',
      's.email',
      's.password_hash',
      's.phone',
      's.options',
      's.status',
      's.valid_until',
      's.acted_at',
      'd.id as live_document',
      'd.deleted_at',
    ])
    .$call((q) =>
      'shareId' in by
        ? q.where('s.id', '=', by.shareId)
        : q.where('s.id', 'in', (eb) =>
            eb.selectFrom('share_links').select('share_id').where('token_hash', '=', by.linkHash),
          ),
    )
    .executeTakeFirst();
  if (!row) return undefined;
  const standing = shareStanding(row, {
    documentDeleted: row.live_document === null || row.deleted_at !== null,
    now: deps.clock.now(),
    downloadDays: deps.config.recipientDownloadDays,
  });
  return { row, standing };
}

/**
 * What a share link's address (/s/<token>) leads to, for the page a person opens: nothing (`unknown`),
 * a share that ended, one whose recipient acted (until when they may download what they signed, and
 * whether the link itself may: not for a protected share), or a live share (the signer page).
 */
export async function shareLinkStanding(
  deps: Deps,
  token: string,
): Promise<
  | { standing: 'unknown' | 'ended' | 'live' }
  | { standing: 'completed'; downloadUntil: Date; linkDownloads: boolean; language: string | undefined }
> {
  if (!token.startsWith('shr_')) return { standing: 'unknown' };
  const found = await shareWithStanding(deps, { linkHash: hashToken(token) });
  if (!found) return { standing: 'unknown' };
  if (found.standing !== 'completed') return { standing: found.standing };
  return {
    standing: 'completed',
    downloadUntil: downloadableUntil(found.row, deps.config.recipientDownloadDays) ?? deps.clock.now(),
    linkDownloads: !isProtected(found.row),
    language: shareOptions(found.row).language,
  };
}

/**
 * A recipient's action as the calls that name the document take it (POST /share/execute, PUT
 * /share/reject): the caller's share on it found (loadCallerShare), then `act` on that share, which
 * POST /inbox/action calls with the share it names.
 */
export function onCallerShare<O extends { id: string }, R>(
  act: (deps: Deps, caller: RecipientCaller, share: ShareRow, options: Omit<O, 'id'>) => Promise<R>,
): (deps: Deps, caller: RecipientCaller, options: O) => Promise<R> {
  return async (deps, caller, options) =>
    act(deps, caller, await loadCallerShare(deps, caller, options.id), options);
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
