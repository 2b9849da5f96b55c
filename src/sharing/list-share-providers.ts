import type { Deps } from '../core/deps.js';
import { offeredProviders } from '../core/sharing/identity-factors.js';
import { needsCode } from '../core/sharing/share-protection.js';
import type { Recipient } from '../core/access/recipient-caller.js';
import { sharerOf } from '../core/sharing/share-links.js';
import { shareOptions } from '../core/sharing/share-types.js';
import { SHARE_OIDC_PATH } from './start-share-oidc.js';

export interface ShareProviders {
  /** The identity providers this share offers, with the address that starts each (add the share token). */
  providers: { name: string; label: string; start: string }[];
  /** Which provider proved the recipient's identity in the caller's session, and when; absent until one did. */
  identityVerified?: { provider: string; at: string };
  /**
   * Whether the caller's token may act: the link of a protected share never does; a recipient
   * session does once every protection was passed in it.
   */
  isUnlocked: boolean;
  /**
   * What else unlocks the share, so that the page asks for exactly that: its password, and a one-time
   * code (where POST /share/otp sends it), or null when the share has none.
   */
  unlockWith: { password: boolean; code: 'sms' | 'email' | null };
  /**
   * What the invitation said already, so a locked page can say it too (issue 40): the document's
   * title and who sent it (their display name, else their login name).
   */
  documentTitle: string;
  sharedBy: string;
}

/**
 * GET /share/oidc (spec: Authentication 6): what an external recipient, locked or not, needs to prove
 * who they are: the identity providers their share allows that the operator configured, and the
 * password or code it also asks for.
 */
export async function listShareProviders(deps: Deps, recipient: Recipient): Promise<ShareProviders> {
  const share = await deps.db
    .selectFrom('shares')
    .selectAll()
    .where('id', '=', recipient.shareId)
    .executeTakeFirstOrThrow();
  const [document, sender] = await Promise.all([
    deps.db.selectFrom('documents').select('title').where('id', '=', share.document_id).executeTakeFirst(),
    sharerOf(deps.db, share.shared_by),
  ]);
  return {
    providers: offeredProviders(shareOptions(share).allowedOAuths, deps.config.oidcProviders).map((p) => ({
      name: p.name,
      label: p.label,
      start: `${deps.config.publicUrl}${SHARE_OIDC_PATH}/${encodeURIComponent(p.name)}`,
    })),
    // The identity proven in the caller's own session: a sign-in in someone else's browser proves
    // nothing for this caller.
    ...(recipient.identity ? { identityVerified: recipient.identity } : {}),
    isUnlocked: recipient.unlocked,
    unlockWith: {
      password: share.password_hash !== null,
      code: needsCode(share) ? (share.phone ? 'sms' : 'email') : null,
    },
    documentTitle: document?.title ?? '',
    sharedBy: sender?.name ?? share.shared_by,
  };
}
