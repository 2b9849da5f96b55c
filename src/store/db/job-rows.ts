import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database, JobTable } from './schema.js';

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
    const place = await joinLane(trx, row.orderingKey, row.now);
    orderingSeq = place.seq;
    if (!place.head) runAt = null;
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

/**
 * Takes the next place in lane `key` for a job about to be queued in it (counted as active), locking
 * the lane's row until the caller commits. `head`: no other job of the lane is active, so the job is
 * due at once; otherwise it waits (`run_at` null) until the job before it finishes.
 */
export async function joinLane(
  trx: Kysely<Database>,
  key: string,
  now: string,
): Promise<{ seq: number; head: boolean }> {
  const lane = await trx
    .insertInto('job_lanes')
    .values({ key, last_seq: 1, active: 1, updated_at: now })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet((eb) => ({
        last_seq: eb('job_lanes.last_seq', '+', 1),
        active: eb('job_lanes.active', '+', 1),
        updated_at: now,
      })),
    )
    .returning(['last_seq', 'active'])
    .executeTakeFirstOrThrow();
  return { seq: Number(lane.last_seq), head: Number(lane.active) <= 1 };
}

/** A row that must commit together with a job's outcome (a delivery attempt): both, or neither. */
export type RecordedRow = {
  [T in keyof Database]: { into: T; values: Insertable<Database[T]> };
}[keyof Database];

/** One job of a batch of settlements, its outcome decided: a request's own (position 0) or a follower. */
export interface SettlementRow {
  /** The request's place in the batch. */
  slot: number;
  position: number;
  id: string;
  /** The worker whose claim of the request's own job this settles. */
  lockedBy: string;
  /** The attempt this settles (a follower's: one more than it has, the attempt it ran under the head's claim). */
  attempts: number;
  status: 'queued' | 'done' | 'dead';
  /** When a job to retry is due again (ISO). */
  runAt: string | null;
  error: string | null;
  /** The job's lane, when it has one. */
  lane: string | null;
  seq: number | null;
  /** The worker that takes the lane's next job (a hand-off), until `leaseUntil` (ISO), when its type is one of `takeTypes`. */
  taker: string | null;
  leaseUntil: string | null;
  takeTypes: readonly string[];
  record: RecordedRow | undefined;
}

/** Settlements to write at once, at `at` (ISO); `lanes` are those whose count of active jobs changes. */
export interface SettlementBatch {
  at: string;
  rows: SettlementRow[];
  lanes: string[];
}

/** A job of a batch as written: whether its request could be written, whether it was, and its lane's next job. */
export type SettledRow = Selectable<JobTable> & {
  slot: number;
  position: number;
  ok: boolean;
  settled: boolean;
  lane_last_seq: number | string | null;
};

/** How a dialect writes a batch of settlements at once (store/db/<dialect>/job-settlement.ts). */
export interface JobSettlement {
  /** The whole batch as one statement; undefined where a transaction of single settlements serves. */
  readonly settleInOneStatement:
    ((db: Kysely<Database>, batch: SettlementBatch) => Promise<SettledRow[]>) | undefined;
}
