import type { Kysely } from 'kysely';
import { enqueue } from './queue.js';
import type { Worker } from './worker.js';
import type { Database } from '../store/db/schema.js';
import type { Mailer, MailMessage, OutgoingMail, StoredAttachment } from '../notify/mail/mailer.js';
import type { SmsMessage, SmsSender } from '../notify/sms/sms-sender.js';

const MAIL_JOB = 'mail.send';
const SMS_JOB = 'sms.send';
// A message that cannot go out within a day is stale: the recipient gets a reminder instead.
const DEADLINE_MS = 86_400_000;

/**
 * Queues an e-mail inside the transaction of the change that causes it (sent by the worker, retried).
 * `requestId`: the request that made the change (undefined for scheduled work), in the job's logs.
 *
 * ```ts
 * await queueMail(trx, shareMail({ kind: 'invitation', ... }), now, actor.requestId);
 * ```
 */
export const queueMail = queueSending<MailMessage>(MAIL_JOB);

/** Queues a text message, like `queueMail`. */
export const queueSms = queueSending<SmsMessage>(SMS_JOB);

/** Queues one message of a sending job's type, to go out within a day (DEADLINE_MS). */
function queueSending<M extends MailMessage | SmsMessage>(type: string) {
  return async (
    trx: Kysely<Database>,
    message: M,
    now: Date,
    requestId: string | undefined,
  ): Promise<void> => {
    await enqueue(trx, {
      type,
      payload: { ...message },
      now,
      requestId,
      deadline: new Date(now.getTime() + DEADLINE_MS),
    });
  };
}

/** Reads a message's attachment when it goes out; undefined when the file is gone (its document deleted). */
export type AttachmentReader = (attachment: StoredAttachment) => Promise<Buffer | undefined>;

/**
 * Gives a worker the sending jobs. A message whose attachment is gone by the time it goes out (its
 * document was deleted meanwhile) is not sent: it would promise a file it cannot carry.
 */
export function registerNotificationJobs(
  worker: Worker,
  senders: { mailer: Mailer; sms: SmsSender; readAttachment: AttachmentReader },
): void {
  worker.register(MAIL_JOB, async (job) => {
    const { attachments, ...message } = job.payload as unknown as MailMessage;
    const outgoing: OutgoingMail = { ...message };
    if (attachments?.length) {
      outgoing.attachments = [];
      for (const attachment of attachments) {
        const content = await senders.readAttachment(attachment);
        if (!content) return;
        outgoing.attachments.push({
          filename: attachment.filename,
          contentType: attachment.contentType,
          content,
        });
      }
    }
    await senders.mailer.send(outgoing);
  });
  worker.register(SMS_JOB, async (job) => {
    await senders.sms.send(job.payload as unknown as SmsMessage);
  });
  worker.onStop(() => senders.mailer.close());
}
