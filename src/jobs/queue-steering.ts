import type { Kysely } from 'kysely';
import { joinLane } from '../store/db/job-rows.js';
import type { Database } from '../store/db/schema.js';
import { ringDoorbellWith } from './doorbell.js';

/**
 * What an operator may do to single jobs besides what workers do (`signery jobs retry|cancel`,
 * src/ops/jobs/), keeping the queue's rules (queue.ts): a lane's jobs still run one at a time in
 * order, and its row counts exactly its unfinished jobs. Each function changes one job in the
 * caller's write transaction and answers whether it did; a job in another state than the one it
 * acts on is left as it is (a worker may have taken it meanwhile).
 */

/** Why a job was cancelled, kept as its last error (the deliveries list shows it failed). */
export const CANCELLED = 'cancelled by an operator (signery jobs cancel)';

/**
 * Queues a dead job again, due now, as a new series of attempts: its attempts start again from 0
 * and a deadline, when it has one, lies as far ahead of now as it first lay after the job was
 * enqueued (a webhook delivery: 24 hours). A job of a lane takes the lane's last place, behind the
 * jobs waiting there (their order stays as it was), as a retried delivery does (retry-delivery.ts).
 * Its id stays, so what names the job (a delivery's `job_id`) still does.
 *
 * ```ts
 * await writeTransaction(db, dialect, (trx) => requeueDeadJob(trx, jobId, clock.now()));
 * ```
 */
export async function requeueDeadJob(trx: Kysely<Database>, jobId: string, now: Date): Promise<boolean> {
  const at = now.toISOString();
  // The status changes first, under the row's lock: of two operators (or an operator and the purge),
  // one has the job. Its lane's row is locked after it, which no one waiting on that lane holds.
  const job = await trx
    .updateTable('jobs')
    .set({ status: 'queued', run_at: at, attempts: 0, locked_by: null, lease_until: null, updated_at: at })
    .where('id', '=', jobId)
    .where('status', '=', 'dead')
    .returning(['ordering_key', 'deadline_at', 'created_at'])
    .executeTakeFirst();
  if (!job) return false;
  let runAt: string | null = at;
  let orderingSeq: number | null = null;
  if (job.ordering_key !== null) {
    const place = await joinLane(trx, job.ordering_key, at);
    orderingSeq = place.seq;
    if (!place.head) runAt = null;
  }
  const window =
    job.deadline_at === null
      ? null
      : new Date(job.deadline_at).getTime() - new Date(job.created_at).getTime();
  // A window of nothing (a deadline at its enqueueing) would make the first failure final: a minute at least.
  const deadline = window === null ? null : new Date(now.getTime() + Math.max(window, 60_000)).toISOString();
  await trx
    .updateTable('jobs')
    .set({ run_at: runAt, ordering_seq: orderingSeq, deadline_at: deadline })
    .where('id', '=', jobId)
    .execute();
  if (runAt !== null) await ringDoorbellWith(trx);
  return true;
}

/**
 * Cancels a queued job (due, delayed or waiting in its lane): it becomes `dead` with CANCELLED as
 * its last error, so it is kept and purged like a job that failed for good (a webhook delivery is
 * then listed `failed`, and can be retried). Never a running job: it returns false, and the job's
 * worker finishes it. A job of a lane leaves the lane (its place is cleared, as if it had never
 * been enqueued there); when it was the lane's head, the next job waiting in the lane becomes due.
 */
export async function cancelQueuedJob(trx: Kysely<Database>, jobId: string, now: Date): Promise<boolean> {
  const at = now.toISOString();
  const job = await trx
    .selectFrom('jobs')
    .select(['ordering_key', 'ordering_seq', 'run_at'])
    .where('id', '=', jobId)
    .where('status', '=', 'queued')
    .executeTakeFirst();
  if (!job) return false;
  const lane = job.ordering_key !== null && job.ordering_seq !== null ? job.ordering_key : undefined;
  // The lane's row first, as enqueue and finish lock it: one lock order, no deadlock.
  if (lane !== undefined)
    await trx
      .updateTable('job_lanes')
      .set((eb) => ({ active: eb('active', '-', 1), updated_at: at }))
      .where('key', '=', lane)
      .execute();
  const cancelled = await trx
    .updateTable('jobs')
    .set({
      status: 'dead',
      run_at: null,
      last_error: CANCELLED,
      // Out of its lane: finishing the head looks for the next job by its place (queue.ts, finish).
      ordering_seq: null,
      updated_at: at,
    })
    .where('id', '=', jobId)
    .where('status', '=', 'queued')
    .executeTakeFirst();
  if (cancelled.numUpdatedRows === 0n) {
    // A worker claimed it between the two statements (PostgreSQL): it runs, and stays counted.
    if (lane !== undefined)
      await trx
        .updateTable('job_lanes')
        .set((eb) => ({ active: eb('active', '+', 1) }))
        .where('key', '=', lane)
        .execute();
    return false;
  }
  // Only a lane's head has a run_at (due or retrying); its successor was waiting for it to finish.
  if (lane !== undefined && job.run_at !== null) {
    const due = await trx
      .updateTable('jobs')
      .set({ run_at: at, updated_at: at })
      .where('id', '=', (eb) =>
        eb
          .selectFrom('jobs')
          .select('id')
          .where('ordering_key', '=', lane)
          .where('ordering_seq', '>', job.ordering_seq)
          .where('status', '=', 'queued')
          .where('run_at', 'is', null)
          .orderBy('ordering_seq')
          .limit(1),
      )
      .executeTakeFirst();
    if (due.numUpdatedRows > 0n) await ringDoorbellWith(trx);
  }
  return true;
}
