import type { Kysely } from 'kysely';
import type { Deps } from '../deps.js';
import { queueMail, queueSms } from '../../jobs/notification-jobs.js';
import { reminderSms, shareMail } from '../../notify/mail/share-mail.js';
import type { Database } from '../../store/db/schema.js';
import { freshRecipientLink, sharerOf, type Sharer } from './share-links.js';
import { shareOptions, type ShareRow } from './share-types.js';

/** Finds sharers by their user id. */
export type SharerLookup = (userId: string) => Promise<Sharer | undefined>;

/**
 * Looks each sharer up once, for a change that mails many shares: the shares of one round mostly
 * have the same sharer.
 */
export function sharersOf(db: Kysely<Database>): SharerLookup {
  const known = new Map<string, Promise<Sharer | undefined>>();
  return (userId) => {
    let sharer = known.get(userId);
    if (!sharer) {
      sharer = sharerOf(db, userId);
      known.set(userId, sharer);
    }
    return sharer;
  };
}

/**
 * Queues the e-mail of a share that owes its recipient's action now: the invitation when their turn
 * comes, or a reminder (manual, PUT /share/reminder, or automatic). It is in the share's language and
 * in its sharer's name, with its deadline and a link that works: the signer page for a user, a new
 * share link for an external recipient (issue 25: "reminder mails carry no link at all"); the links
 * of earlier messages keep working while the share is live. An invitation carries the sharer's
 * message. A share without an e-mail address gets none.
 */
export async function queueShareMail(
  trx: Kysely<Database>,
  deps: Deps,
  share: ShareRow,
  mail: {
    kind: 'invitation' | 'reminder';
    documentTitle: string;
    /** Where the sharer is found; by default looked up for this message alone. */
    sharers?: SharerLookup;
  },
  now: Date,
  requestId: string | undefined,
): Promise<void> {
  if (!share.email) return;
  const link = await freshRecipientLink(trx, deps.config.publicUrl, share, now);
  const sender = await (mail.sharers ?? sharersOf(trx))(share.shared_by);
  await queueMail(
    trx,
    shareMail({
      kind: mail.kind,
      to: share.email,
      language: shareOptions(share).language,
      documentTitle: mail.documentTitle,
      from: sender?.name ?? 'Signery',
      sender,
      purpose: share.purpose,
      link,
      ...(mail.kind === 'invitation' ? { note: share.message } : {}),
      deadline: share.valid_until,
    }),
    now,
    requestId,
  );
}

/**
 * Queues a reminder by text message to `phone`, with the same fresh link as a reminder mail (issue 25:
 * every reminder leads to a page that works for its reader).
 */
export async function queueReminderSms(
  trx: Kysely<Database>,
  deps: Deps,
  share: ShareRow,
  sms: { phone: string; documentTitle: string },
  now: Date,
  requestId: string | undefined,
): Promise<void> {
  const text = reminderSms({
    language: shareOptions(share).language,
    documentTitle: sms.documentTitle,
    purpose: share.purpose,
    link: await freshRecipientLink(trx, deps.config.publicUrl, share, now),
  });
  await queueSms(trx, { to: sms.phone, text }, now, requestId);
}
