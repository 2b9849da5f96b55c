import { shareOptions, type ShareRow } from './share-types.js';

/** Whether the share's recipient must prove who they are through one of its `allowedOAuths`. */
export function needsIdentity(share: Pick<ShareRow, 'options'>): boolean {
  return shareOptions(share).allowedOAuths.length > 0;
}

/**
 * Whether the share is protected: a password, an SMS code (phone), an e-mail code or identity
 * providers (`allowedOAuths`). Its link is then locked (403 MFA_REQUIRED) for whoever holds it, and
 * only a recipient session that passed every protection acts. It is read from the protections
 * themselves each time, never stored apart, so no change can unlock a link without removing them.
 */
export function isProtected(share: Pick<ShareRow, 'password_hash' | 'phone' | 'options'>): boolean {
  const options = shareOptions(share);
  return (
    Boolean(share.password_hash) ||
    Boolean(share.phone) ||
    options.emailCode === true ||
    options.allowedOAuths.length > 0
  );
}

/** Whether the share asks for a one-time code: by SMS when it has a phone, or by e-mail. */
export function needsCode(share: Pick<ShareRow, 'phone' | 'options'>): boolean {
  return Boolean(share.phone) || shareOptions(share).emailCode === true;
}
