import type { Deps } from '../core/deps.js';
import type { Worker } from '../jobs/worker.js';
import { record } from '../core/audit/record.js';
import { owesAction, PENDING, REMINDABLE_PURPOSES, shareOptions } from '../core/sharing/share-types.js';
import { queueShareMail } from '../core/sharing/share-mails.js';
import { endProcess, loadDocumentForUpdate } from '../core/sharing/workflow.js';
import { writeTransaction } from '../store/db/dialect.js';
import {
  COMPLETION_MAILS_JOB,
  sendCompletionMails,
  type CompletionPayload,
} from '../core/sharing/completion.js';
import { PREVIEW_AHEAD_JOB, type PreviewAheadPayload } from '../core/sharing/preview-ahead.js';
import { drawPreviewAhead } from './preview-document.js';

const SYSTEM = { name: 'system', requestId: 'scheduler' };
const BATCH = 200;

/**
 * Expires every pending share whose `validUntil` has passed. Only a share that owes a mandatory action
 * decides the process (spec: "expired = the process ended without completion"): its document, when in
 * progress, ends as `expired` (`signExpired`, the share named in the audit). Any other share (view,
 * edit, an optional action, a share of a document not in progress) expires alone: its link stops and
 * the audit records `shareExpired` naming it; the document goes on.
 */
export async function expireShares(deps: Deps, now: Date): Promise<number> {
  const due = await deps.db
    .selectFrom('shares')
    .selectAll()
    .where('status', 'in', [...PENDING])
    .where('valid_until', '<=', now.toISOString())
    .limit(BATCH)
    .execute();
  let expired = 0;
  for (const share of due) {
    await writeTransaction(deps.db, deps.dialect, async (trx) => {
      const doc = await loadDocumentForUpdate(trx, share.document_id);
      const by = { ...SYSTEM, tenantId: doc.tenant_id };
      if (owesAction(share) && doc.share_state === 'inprogress') {
        await endProcess(trx, { doc, state: 'expired', by, now, cause: share });
      } else {
        const ended = await trx
          .updateTable('shares')
          .set({ status: 'expired', next_reminder_at: null, updated_at: now.toISOString() })
          .where('id', '=', share.id)
          .where('status', 'in', [...PENDING])
          .executeTakeFirst();
        if (Number(ended.numUpdatedRows) === 0) return;
        await record(trx, {
          tenantId: doc.tenant_id,
          actorId: SYSTEM.name,
          activityType: 'shareExpired',
          objectType: doc.kind,
          objectId: doc.id,
          requestId: SYSTEM.requestId,
          data: {
            shareId: share.id,
            shareTo: share.share_to,
            purpose: share.purpose,
            validUntil: share.valid_until,
          },
          at: now,
        });
      }
      expired++;
    });
  }
  return expired;
}

/**
 * spec Sharing rule 4: automatic reminders begin at `start`, repeat every `intervalDays` and stop when
 * the recipient acts (the share is then no longer active and its next reminder is cleared), and with
 * the process (a document completed, rejected, cancelled or expired, or deleted). Pending sign, approve and review shares
 * only (spec Reminders). E-mail only.
 */
export async function sendAutomaticReminders(deps: Deps, now: Date): Promise<number> {
  const due = await deps.db
    .selectFrom('shares')
    .innerJoin('documents', 'documents.id', 'shares.document_id')
    .selectAll('shares')
    .select('documents.title')
    .where('shares.status', '=', 'active')
    // spec Reminders: pending sign, approve and review actions only, while the process has not ended.
    .where('shares.purpose', 'in', [...REMINDABLE_PURPOSES])
    .where((eb) =>
      eb.or([eb('documents.share_state', 'is', null), eb('documents.share_state', '=', 'inprogress')]),
    )
    .where('documents.deleted_at', 'is', null)
    .where('shares.next_reminder_at', '<=', now.toISOString())
    .limit(BATCH)
    .execute();
  for (const share of due) {
    const options = shareOptions(share);
    const interval = (options.automaticReminder?.intervalDays ?? 1) * 86_400_000;
    let next = new Date(share.next_reminder_at ?? now).getTime() + interval;
    while (next <= now.getTime()) next += interval;
    await writeTransaction(deps.db, deps.dialect, async (trx) => {
      // No request asked for it: the schedule did.
      await queueShareMail(
        trx,
        deps,
        share,
        { kind: 'reminder', documentTitle: share.title },
        now,
        undefined,
      );
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
  worker.register(PREVIEW_AHEAD_JOB, async (job) => {
    await drawPreviewAhead(deps, job.payload as unknown as PreviewAheadPayload);
  });
  worker.register(COMPLETION_MAILS_JOB, async (job) => {
    await sendCompletionMails(
      deps,
      { ...job, payload: job.payload as unknown as CompletionPayload },
      deps.clock.now(),
    );
  });
}
