import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** A job as it is first written: queued, never attempted. */
export interface QueuedJobRow {
  id: string;
  type: string;
  /** The payload as JSON text. */
  payload: string;
  /** When it is due (ISO); behind a lane's earlier jobs it waits instead (`run_at` null). */
  runAt: string;
  maxAttempts: number | null;
  deadlineAt: string | null;
  /** Its lane: jobs of one lane run one at a time, in the order they were enqueued. */
  orderingKey: string | null;
  /** The enqueuing change's time (ISO). */
  now: string;
}

/**
 * Writes a queued job in the caller's transaction. In a lane it takes the lane's next sequence
 * number and waits (`run_at` null) while an earlier job of the lane is active; the lane's row stays
 * locked until the caller commits, so enqueues to one lane take their numbers in commit order and the
 * head's hand-off (which locks the same row) sees this job. A job whose id exists is not written
 * again (`inserted` false).
 */
export async function insertQueuedJob(
  trx: Kysely<Database>,
  row: QueuedJobRow,
): Promise<{ inserted: boolean; orderingSeq: number | null }> {
  let runAt: string | null = row.runAt;
  let orderingSeq: number | null = null;
  if (row.orderingKey !== null) {
    const lane = await trx
      .insertInto('job_lanes')
      .values({ key: row.orderingKey, last_seq: 1, active: 1, updated_at: row.now })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet((eb) => ({
          last_seq: eb('job_lanes.last_seq', '+', 1),
          active: eb('job_lanes.active', '+', 1),
          updated_at: row.now,
        })),
      )
      .returning(['last_seq', 'active'])
      .executeTakeFirstOrThrow();
    orderingSeq = Number(lane.last_seq);
    if (Number(lane.active) > 1) runAt = null;
  }
  const inserted = await trx
    .insertInto('jobs')
    .values({
      id: row.id,
      type: row.type,
      payload: row.payload,
      status: 'queued',
      run_at: runAt,
      attempts: 0,
      max_attempts: row.maxAttempts,
      deadline_at: row.deadlineAt,
      locked_by: null,
      lease_until: null,
      last_error: null,
      ordering_key: row.orderingKey,
      ordering_seq: orderingSeq,
      created_at: row.now,
      updated_at: row.now,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  return { inserted: Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0, orderingSeq };
}
