import type { Deps } from '../deps.js';
import type { Worker } from '../jobs/worker.js';
import { queueMail } from '../notify/queue-notification.js';
import { shareMail } from '../notify/mail/share-mail.js';
import { reminderLink } from './share-links.js';
import { shareOptions } from './share-types.js';
import { endProcess, loadDocumentForUpdate } from './workflow.js';
import { writeTransaction } from '../store/db/dialect.js';

const SYSTEM = { name: 'system', requestId: 'scheduler' };
const BATCH = 200;

/**
 * Ends, as `expired`, the process of every document in progress with a pending share whose
 * `validUntil` has passed (spec: "expired = the process ended without completion").
 */
export async function expireShares(deps: Deps, now: Date): Promise<number> {
  const due = await deps.db
    .selectFrom('shares')
    .innerJoin('documents', 'documents.id', 'shares.document_id')
    .selectAll('shares')
    .where('shares.status', 'in', ['active', 'waiting'])
    .where('shares.valid_until', '<=', now.toISOString())
    .where('documents.share_state', '=', 'inprogress')
    .limit(BATCH)
    .execute();
  let expired = 0;
  for (const share of due) {
    await writeTransaction(deps.db, deps.dialect, async (trx) => {
      const doc = await loadDocumentForUpdate(trx, share.document_id);
      if (doc.share_state !== 'inprogress') return;
      await endProcess(trx, {
        doc,
        state: 'expired',
        by: { ...SYSTEM, tenantId: doc.tenant_id },
        now,
        cause: share,
      });
      expired++;
    });
  }
  return expired;
}

/**
 * spec Sharing rule 4: automatic reminders begin at `start`, repeat every `intervalDays` and stop when
 * the recipient acts (the share is then no longer active and its next reminder is cleared). E-mail only.
 */
export async function sendAutomaticReminders(deps: Deps, now: Date): Promise<number> {
  const due = await deps.db
    .selectFrom('shares')
    .innerJoin('documents', 'documents.id', 'shares.document_id')
    .selectAll('shares')
    .select('documents.title')
    .where('shares.status', '=', 'active')
    .where('shares.next_reminder_at', '<=', now.toISOString())
    .limit(BATCH)
    .execute();
  for (const share of due) {
    const options = shareOptions(share);
    const interval = (options.automaticReminder?.intervalDays ?? 1) * 86_400_000;
    let next = new Date(share.next_reminder_at ?? now).getTime() + interval;
    while (next <= now.getTime()) next += interval;
    await writeTransaction(deps.db, deps.dialect, async (trx) => {
      if (share.email) {
        await queueMail(
          trx,
          shareMail({
            kind: 'reminder',
            to: share.email,
            language: options.language,
            documentTitle: share.title,
            from: 'Signery',
            purpose: share.purpose,
            link: reminderLink(deps.config.publicUrl, share),
          }),
          now,
          // No request asked for it: the schedule did.
          undefined,
        );
      }
      await trx
        .updateTable('shares')
        .set({ next_reminder_at: new Date(next).toISOString(), last_reminder_at: now.toISOString() })
        .where('id', '=', share.id)
        .where('next_reminder_at', '=', share.next_reminder_at)
        .execute();
    });
  }
  return due.length;
}

/** The sharing schedules: expiry and automatic reminders, checked every minute. */
export function registerSharingJobs(worker: Worker, deps: Deps): void {
  worker.every('sharing.expire', 60_000, async () => {
    await expireShares(deps, deps.clock.now());
  });
  worker.every('sharing.remind', 60_000, async () => {
    await sendAutomaticReminders(deps, deps.clock.now());
  });
}
