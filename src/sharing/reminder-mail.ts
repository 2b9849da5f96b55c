import type { Kysely } from 'kysely';
import type { Deps } from '../core/deps.js';
import { freshRecipientLink, sharerOf } from '../core/sharing/share-links.js';
import { shareOptions, type ShareRow } from '../core/sharing/share-types.js';
import { queueMail } from '../jobs/notification-jobs.js';
import { shareMail } from '../notify/mail/share-mail.js';
import type { Database } from '../store/db/schema.js';

/**
 * Queues a reminder e-mail for a share still owing its action (manual, PUT /share/reminder, or
 * automatic), in the share's language and in its sharer's name, with its deadline and a link that
 * works: the signer page for a user, a new share link for an external recipient (issue 25: "reminder
 * mails carry no link at all"), which the message says replaces the earlier one.
 */
export async function queueReminderMail(
  trx: Kysely<Database>,
  deps: Deps,
  share: ShareRow & { email: string },
  documentTitle: string,
  now: Date,
  requestId: string | undefined,
): Promise<void> {
  const sender = await sharerOf(trx, share.shared_by);
  await queueMail(
    trx,
    shareMail({
      kind: 'reminder',
      to: share.email,
      language: shareOptions(share).language,
      documentTitle,
      from: sender?.name ?? 'Signery',
      sender,
      purpose: share.purpose,
      link: await freshRecipientLink(trx, deps.config.publicUrl, share),
      newLink: share.user_id === null,
      deadline: share.valid_until,
    }),
    now,
    requestId,
  );
}
