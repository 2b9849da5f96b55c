import type { Static } from 'typebox';
import type { ShareCodeBody, UnlockBody } from './contract.js';
import { randomInt } from 'node:crypto';
import { assertNotThrottled, checkGuess, type ThrottleKey } from '../core/identity/login-throttle.js';
import { hashToken, verifyPassword } from '../core/identity/secrets.js';
import type { Deps } from '../core/deps.js';
import { Conflict, MfaRequired, Unauthenticated, ValidationError } from '../base/errors.js';
import { queueMail, queueSms } from '../jobs/notification-jobs.js';
import { shareMail } from '../notify/mail/share-mail.js';
import type { Recipient } from '../core/access/recipient-caller.js';
import { openRecipientSession } from '../core/sharing/recipient-session.js';
import { shareStanding } from '../core/sharing/share-standing.js';
import { shareOptions } from '../core/sharing/share-types.js';
import { writeTransaction } from '../store/db/dialect.js';
import { needsIdentity, needsCode } from '../core/sharing/share-protection.js';

const CODE_TTL_MS = 10 * 60_000;
const ATTEMPTS = 5;

/** The failed unlock attempts of one share (password, code, identity provider) count together. */
export function shareThrottleKey(shareId: string): ThrottleKey {
  return { key: `share:${shareId}`, max: ATTEMPTS };
}

/**
 * POST /share/otp (Contract): sends a one-time code to the recipient, by SMS when the share has a phone,
 * otherwise (or with `channel: 'email'`) by e-mail. A new code replaces the previous one.
 */
export async function sendShareCode(
  deps: Deps,
  recipient: Recipient,
  options: NonNullable<Static<typeof ShareCodeBody>>,
) {
  const share = await deps.db
    .selectFrom('shares')
    .selectAll()
    .where('id', '=', recipient.shareId)
    .executeTakeFirstOrThrow();
  // A code that could not unlock the share would only mislead its recipient.
  if (!needsCode(share)) throw new ValidationError('This share is not protected by a one-time code');
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
        recipient.requestId,
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
        recipient.requestId,
      );
    }
  });
  return { channel };
}

/**
 * POST /share/unlock `{password}` or `{otp}` (Contract): answers a recipient session token, bound to
 * this unlock; the link itself stays locked for everyone. A share with both a password and a code
 * needs both. Attempts are limited (5 per window, then 429), codes expire. A share with identity
 * providers (`allowedOAuths`) needs the recipient's sign-in there first (GET /share/oidc/:provider),
 * which gives a session of its own: its password or code, if any, are then given here with that
 * session's token, and the answer is a new session that passed them all.
 */
export async function unlockShare(
  deps: Deps,
  recipient: Recipient,
  options: Static<typeof UnlockBody>,
): Promise<{ token: string }> {
  const share = await deps.db
    .selectFrom('shares')
    .selectAll()
    .where('id', '=', recipient.shareId)
    .executeTakeFirstOrThrow();
  const now = deps.clock.now();
  const doc = await deps.db
    .selectFrom('documents')
    .select('deleted_at')
    .where('id', '=', share.document_id)
    .executeTakeFirst();
  const documentDeleted = !doc || doc.deleted_at !== null;
  const downloadDays = deps.config.recipientDownloadDays;
  // A recipient who acted unlocks again to download what they signed (DESIGN: "their link (or their
  // recipient session) may download the documents they signed for RECIPIENT_DOWNLOAD_DAYS"): the
  // session this opens is download-only, as the share's standing makes every session of it.
  if (shareStanding(share, { documentDeleted, now, downloadDays }) === 'ended') {
    throw new Conflict(`This share is over (${share.status}): there is nothing left to unlock`);
  }
  const key = shareThrottleKey(share.id);
  // The attempt is reserved before the password's slow hash, so parallel guesses count.
  await checkGuess(
    deps,
    [key],
    async () => {
      // The identity is proven in the session that asks, never taken from an earlier visitor's sign-in.
      if (needsIdentity(share) && !recipient.identity) {
        throw new MfaRequired(
          'This share needs you to sign in with an identity provider first: GET /share/oidc lists them',
        );
      }
      let ok = true;
      if (share.password_hash)
        ok = options.password !== undefined && (await verifyPassword(share.password_hash, options.password));
      if (ok && needsCode(share)) {
        // A code is used once: its consumption is a compare-and-set, so of two requests with one code
        // exactly one wins.
        const otp = options.otp?.trim();
        const used =
          otp === undefined
            ? undefined
            : await deps.db
                .updateTable('shares')
                .set({ otp_hash: null, otp_expires_at: null })
                .where('id', '=', share.id)
                .where('otp_hash', '=', hashToken(`${share.id}:${otp}`))
                .where('otp_expires_at', '>', now.toISOString())
                .executeTakeFirst();
        ok = used !== undefined && used.numUpdatedRows > 0n;
      }
      if (!ok) {
        throw new Unauthenticated(
          share.password_hash && !options.password
            ? 'The password is required'
            : 'The password or code is not valid',
        );
      }
    },
    { clear: () => [key.key] },
  );
  const token = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    // The half-way session of an identity sign-in is replaced by the one that passed everything.
    if (recipient.sessionId)
      await trx.deleteFrom('recipient_sessions').where('id', '=', recipient.sessionId).execute();
    return openRecipientSession(trx, {
      share,
      unlocked: true,
      identity: recipient.identity,
      now,
      minutes: deps.config.recipientSessionMinutes,
    });
  });
  return { token };
}
