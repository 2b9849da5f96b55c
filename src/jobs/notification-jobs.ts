import type { Kysely } from 'kysely';
import { isSealed, seal, unseal } from '../store/secret-box.js';
import { writeJson } from '../store/db/json.js';
import { enqueue, type ClaimedJob } from './queue.js';
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

/**
 * Queues one message of a sending job's type, to go out within a day (DEADLINE_MS). A message may carry
 * a share link or a one-time code, which are stored nowhere else in clear (DESIGN, secrets at rest): the
 * job keeps it sealed (secret-box.ts) and drops it once sent (dropSent).
 */
function queueSending<M extends MailMessage | SmsMessage>(type: string) {
  return async (
    trx: Kysely<Database>,
    message: M,
    now: Date,
    requestId: string | undefined,
  ): Promise<void> => {
    await enqueue(trx, {
      type,
      payload: { sealed: seal(message) },
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
  senders: { mailer: Mailer; sms: SmsSender; readAttachment: AttachmentReader; db: Kysely<Database> },
): void {
  worker.register(MAIL_JOB, async (job) => {
    const queued = messageOf<MailMessage>(job);
    if (!queued) return;
    const { attachments, ...message } = queued;
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
    await dropSent(senders.db, job);
  });
  worker.register(SMS_JOB, async (job) => {
    const message = messageOf<SmsMessage>(job);
    if (!message) return;
    await senders.sms.send(message);
    await dropSent(senders.db, job);
  });
  worker.onStop(() => senders.mailer.close());
}

/**
 * The message a sending job carries: sealed (queueSending), or as queued by an earlier release; none
 * once it was sent (dropSent), when the attempt that sent it ended before it was settled.
 */
function messageOf<M>(job: ClaimedJob): M | undefined {
  const { sealed, sent } = job.payload as { sealed?: unknown; sent?: unknown };
  if (sent === true) return undefined;
  return (isSealed(sealed) ? unseal(sealed) : job.payload) as M;
}

/** Once a message went out, its job keeps no more of it than that it was sent (and its request id). */
async function dropSent(db: Kysely<Database>, job: ClaimedJob): Promise<void> {
  await db
    .updateTable('jobs')
    .set({ payload: writeJson({ sent: true, ...(job.requestId ? { requestId: job.requestId } : {}) }) })
    .where('id', '=', job.id)
    .execute();
}
