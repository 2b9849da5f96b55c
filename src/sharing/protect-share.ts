import { randomInt } from 'node:crypto';
import { assertNotThrottled, clearFailures, countFailure, type ThrottleKey } from '../auth/login-throttle.js';
import { hashToken, verifyPassword } from '../auth/secrets.js';
import type { Deps } from '../deps.js';
import { MfaRequired, Unauthenticated, ValidationError } from '../errors.js';
import { queueMail, queueSms } from '../notify/queue-notification.js';
import { shareMail } from '../notify/mail/share-mail.js';
import type { Recipient } from './recipient.js';
import { shareOptions, type ShareRow } from './share-types.js';
import { writeTransaction } from '../store/db/dialect.js';

const CODE_TTL_MS = 10 * 60_000;
const ATTEMPTS = 5;

/** The failed unlock attempts of one share (password, code, identity provider) count together. */
export function shareThrottleKey(shareId: string): ThrottleKey {
  return { key: `share:${shareId}`, max: ATTEMPTS };
}

/** Whether the share's recipient must prove who they are through one of its `allowedOAuths`. */
export function needsIdentity(share: Pick<ShareRow, 'options'>): boolean {
  return shareOptions(share).allowedOAuths.length > 0;
}

/**
 * Whether a share-link token starts locked (403 MFA_REQUIRED until unlocked): it has a password, an
 * SMS code (phone) or identity providers (`allowedOAuths`). Every protection set must be passed.
 */
export function startsLocked(share: {
  password: unknown;
  phone: string | null | undefined;
  emailCode?: boolean | undefined;
  allowedOAuths: readonly string[];
}): boolean {
  return (
    Boolean(share.password) ||
    Boolean(share.phone) ||
    share.emailCode === true ||
    share.allowedOAuths.length > 0
  );
}

/**
 * POST /share/otp (Contract): sends a one-time code to the recipient, by SMS when the share has a phone,
 * otherwise (or with `channel: 'email'`) by e-mail. A new code replaces the previous one.
 */
export async function sendShareCode(
  deps: Deps,
  recipient: Recipient,
  options: { channel?: 'sms' | 'email' | undefined },
) {
  const share = await deps.db
    .selectFrom('shares')
    .selectAll()
    .where('id', '=', recipient.shareId)
    .executeTakeFirstOrThrow();
  const channel = options.channel ?? (share.phone ? 'sms' : 'email');
  if (channel === 'sms' && !share.phone)
    throw new ValidationError('This share has no phone number for an SMS code');
  if (channel === 'email' && !share.email)
    throw new ValidationError('This share has no e-mail address for a code');
  await assertNotThrottled(deps, [shareThrottleKey(share.id)]);
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  const now = deps.clock.now();
  const doc = await deps.db
    .selectFrom('documents')
    .select('title')
    .where('id', '=', share.document_id)
    .executeTakeFirstOrThrow();
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await trx
      .updateTable('shares')
      .set({
        otp_hash: hashToken(`${share.id}:${code}`),
        otp_expires_at: new Date(now.getTime() + CODE_TTL_MS).toISOString(),
      })
      .where('id', '=', share.id)
      .execute();
    if (channel === 'sms')
      await queueSms(
        trx,
        { to: share.phone ?? '', text: `Your Signery code: ${code} (valid 10 minutes)` },
        now,
      );
    else {
      await queueMail(
        trx,
        shareMail({
          kind: 'code',
          to: share.email ?? '',
          language: shareOptions(share).language,
          documentTitle: doc.title,
          from: '',
          note: code,
        }),
        now,
      );
    }
  });
  return { channel };
}

/**
 * POST /share/unlock `{password}` or `{otp}` (Contract): unlocks the share-link token. A share with both
 * a password and a phone needs both. Attempts are limited (5 per window, then 429), codes expire. A
 * share with identity providers (`allowedOAuths`) needs the recipient's sign-in there first (GET
 * /share/oidc/:provider); its password or code, if any, then finish the unlock here.
 */
export async function unlockShare(
  deps: Deps,
  recipient: Recipient,
  options: { password?: string | undefined; otp?: string | undefined },
) {
  const share = await deps.db
    .selectFrom('shares')
    .selectAll()
    .where('id', '=', recipient.shareId)
    .executeTakeFirstOrThrow();
  const key = shareThrottleKey(share.id);
  await assertNotThrottled(deps, [key]);
  if (needsIdentity(share) && !share.identity_verified_at) {
    throw new MfaRequired(
      'This share needs you to sign in with an identity provider first: GET /share/oidc lists them',
    );
  }
  const now = deps.clock.now();
  let ok = true;
  if (share.password_hash)
    ok = options.password !== undefined && (await verifyPassword(share.password_hash, options.password));
  // A code is asked for when the share has a phone (SMS) or asks for an e-mail code.
  if (ok && (share.phone || shareOptions(share).emailCode)) {
    ok =
      options.otp !== undefined &&
      share.otp_hash === hashToken(`${share.id}:${options.otp.trim()}`) &&
      share.otp_expires_at !== null &&
      new Date(share.otp_expires_at) > now;
  }
  if (!ok) {
    await countFailure(deps, [key]);
    throw new Unauthenticated(
      share.password_hash && !options.password
        ? 'The password is required'
        : 'The password or code is not valid',
    );
  }
  await clearFailures(deps, key.key);
  await deps.db
    .updateTable('shares')
    .set({ unlocked: 1, otp_hash: null, otp_expires_at: null })
    .where('id', '=', share.id)
    .execute();
}
