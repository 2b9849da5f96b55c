import type { Kysely } from 'kysely';
import type { Deps } from '../deps.js';
import type { DocumentRow } from '../access/document-access.js';
import type { DocumentChanger } from '../changes/change-document.js';
import { enqueue, runNow } from '../../jobs/queue.js';
import { queueMail } from '../../jobs/notification-jobs.js';
import { shareMail } from '../../notify/mail/share-mail.js';
import { writeTransaction } from '../../store/db/dialect.js';
import type { Database } from '../../store/db/schema.js';
import { signerPageLink } from './share-links.js';
import { ACTION_PURPOSES, shareOptions } from './share-types.js';

/**
 * The messages of a completed document (issue 25: "when the document completes, every signer
 * receives the signed PDF, not only the owner"). Completion queues one job; it waits for the seal on
 * completion when one was queued with it, so the file everyone receives is the final, sealed one, then
 * queues one message per person: the owner and everyone who acted on the round, each with the signed
 * PDF attached (read when the message goes out) and, for people with an account, a link to the page.
 */

export const COMPLETION_MAILS_JOB = 'document.completionMails';
export const SEAL_ON_COMPLETE_JOB = 'document.sealOnComplete';

/** Larger files are not attached: many mail servers refuse messages over 20–25 MB once encoded. */
export const MAIL_ATTACHMENT_MAX_BYTES = 15 * 1024 * 1024;

export interface CompletionPayload {
  documentId: string;
  /** The completed version; jobs queued before it was carried have it at the end of their id. */
  version?: number;
}

/**
 * The id of the seal on completion of a document's completed version: the completion messages look
 * for it, and the seal wakes them when it is in the file.
 */
export function sealOnCompleteJobId(documentId: string, version: number): string {
  return `${SEAL_ON_COMPLETE_JOB}:${documentId}:${version}`;
}

/** A worker takes the seal over when the request that queued it has not run it by then (it died). */
const WORKER_TAKES_OVER_MS = 60_000;

export interface SealPayload {
  documentId: string;
  /** The completed document's version: the seal is a compare-and-set on it. */
  version: number;
  by: DocumentChanger;
}

/**
 * Queues the organisation seal of a document the committing signature completed (Contract:
 * `sealOnComplete`), inside that signature's transaction: the seal then exists as durable work exactly
 * when the signature does. The signing request runs it at once (`sealOnCompleteNow`), after its commit
 * and outside any transaction; the job is there for when that fails or the process dies.
 */
export async function queueSealOnComplete(
  trx: Kysely<Database>,
  options: { doc: DocumentRow; by: DocumentChanger; now: Date },
): Promise<string> {
  const { doc, by, now } = options;
  const payload: SealPayload = {
    documentId: doc.id,
    version: doc.version,
    by: { tenantId: by.tenantId, name: by.name, requestId: by.requestId },
  };
  const job = await enqueue(trx, {
    type: SEAL_ON_COMPLETE_JOB,
    id: sealOnCompleteJobId(doc.id, doc.version),
    payload: { ...payload },
    now,
    runAt: new Date(now.getTime() + WORKER_TAKES_OVER_MS),
  });
  return job.id;
}

/** The id of the completion messages of a document's completed version: one job per completion. */
export function completionMailsJobId(documentId: string, version: number): string {
  return `${COMPLETION_MAILS_JOB}:${documentId}:${version}`;
}

/** Inside the transaction that completes the document: the completion messages, as one job. */
export async function queueCompletionMails(
  trx: Kysely<Database>,
  doc: DocumentRow,
  now: Date,
  requestId: string,
): Promise<void> {
  const payload: CompletionPayload = { documentId: doc.id, version: doc.version };
  await enqueue(trx, {
    type: COMPLETION_MAILS_JOB,
    id: completionMailsJobId(doc.id, doc.version),
    payload: { ...payload },
    now,
    requestId,
    deadline: new Date(now.getTime() + 86_400_000),
  });
}

/**
 * After the seal on completion of `version` committed (or found nothing to seal): its messages,
 * waiting for their retry, go out now (a worker is woken with the commit).
 */
export async function wakeCompletionMails(
  trx: Kysely<Database>,
  documentId: string,
  version: number,
  now: Date,
): Promise<void> {
  await runNow(trx, completionMailsJobId(documentId, version), now);
}

/** The seal is still to come: the job is tried again (the seal wakes it when it commits). */
export class SealPending extends Error {
  constructor() {
    super('Waiting for the seal on completion before sending the signed PDF');
  }
}

/**
 * The completion job: one message per person, in one transaction, the file attached by reference.
 * Each message's job carries the id of the request that completed the document, as this job does.
 */
export async function sendCompletionMails(
  deps: Deps,
  job: { id: string; payload: CompletionPayload; requestId: string | null },
  now: Date,
): Promise<number> {
  const { payload } = job;
  const doc = await deps.db
    .selectFrom('documents')
    .selectAll()
    .where('id', '=', payload.documentId)
    .executeTakeFirst();
  if (!doc || doc.deleted_at !== null || doc.share_state !== 'completed') return 0;
  const version = payload.version ?? Number(job.id.slice(job.id.lastIndexOf(':') + 1));
  const seal = await deps.db
    .selectFrom('jobs')
    .select('id')
    .where('id', '=', sealOnCompleteJobId(doc.id, version))
    .where('status', 'in', ['queued', 'running'])
    .executeTakeFirst();
  if (seal) throw new SealPending();

  const file = doc.main_file_id ? await deps.files.find(doc.tenant_id, doc.main_file_id) : undefined;
  const attachment =
    file && file.size <= MAIL_ATTACHMENT_MAX_BYTES
      ? {
          filename: `${doc.title.replace(/[\\/:*?"<>|\p{Cc}]+/gu, '_').slice(0, 120) || 'document'}.pdf`,
          contentType: 'application/pdf',
          tenantId: doc.tenant_id,
          fileId: file.id,
        }
      : (false as const);
  const owner = await deps.db
    .selectFrom('users')
    .select(['id', 'email', 'name', 'display_name'])
    .where('id', '=', doc.owner_id)
    .executeTakeFirst();
  const actors = await deps.db
    .selectFrom('shares')
    .select(['email', 'user_id', 'options'])
    .where('document_id', '=', doc.id)
    .where('status', '=', 'done')
    .where('purpose', 'in', [...ACTION_PURPOSES])
    .orderBy('position')
    .execute();

  const sender = owner ? { name: owner.display_name ?? owner.name, email: owner.email } : undefined;
  const people = new Map<string, { language: string | undefined; internal: boolean }>();
  if (owner?.email) people.set(owner.email.toLowerCase(), { language: undefined, internal: true });
  for (const share of actors) {
    const email = share.email?.toLowerCase();
    if (email && !people.has(email))
      people.set(email, { language: shareOptions(share).language, internal: share.user_id !== null });
  }
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    for (const [to, person] of people) {
      await queueMail(
        trx,
        shareMail({
          kind: 'completed',
          to,
          language: person.language,
          documentTitle: doc.title,
          from: sender?.name ?? '',
          sender,
          // People with an account open it on the signer page; the others have the file itself.
          link: person.internal ? signerPageLink(deps.config.publicUrl, doc.id) : undefined,
          attachment,
        }),
        now,
        job.requestId ?? undefined,
      );
    }
  });
  return people.size;
}
