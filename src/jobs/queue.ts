import { randomUUID } from 'node:crypto';
import {
  sql,
  type Insertable,
  type RawBuilder,
  type Kysely,
  type Selectable,
  type UpdateQueryBuilder,
  type UpdateResult,
} from 'kysely';
import { writeTransaction, type SqlDialect } from '../store/db/dialect.js';
import { readJson, writeJson } from '../store/db/json.js';
import type { Database, JobTable } from '../store/db/schema.js';
import { NOTIFY_WORKERS, ringDoorbellWith } from './doorbell.js';

/**
 * The durable job queue (DESIGN: Stack, jobs): one `jobs` table, claimed with
 * `FOR UPDATE SKIP LOCKED` on PostgreSQL and under SQLite's single write lock, so several nodes can
 * run workers without running a job twice at once.
 *
 * Life of a job: `queued` → (claim) `running` → `done`, or back to `queued` with a later `run_at`
 * when it fails, or `dead` when it fails past its deadline or attempt limit. A claim holds a lease;
 * when the worker dies, the lease expires and the next claim takes the job again (at-least-once).
 *
 * Lanes: jobs enqueued with the same `orderingKey` run one at a time in enqueue order (one
 * webhook's deliveries, Contract: events in order). The lane's row in `job_lanes` counts its
 * unfinished jobs; a job enqueued while the lane is busy waits with `run_at` null, and finishing the
 * lane's head (`done` or `dead`) makes the next one due in the same transaction — or, handed off,
 * claims it at once for the worker that finished the head. Both steps lock the lane's row, so a job
 * enqueued while the head finishes is never left waiting. A retrying head keeps its lane waiting; a
 * dead one lets the next go (skip ahead).
 */

export type JobPayload = Record<string, unknown>;

export interface EnqueueOptions {
  type: string;
  payload: JobPayload;
  /** The enqueuing change's time (its clock). */
  now: Date;
  /** Defaults to `now`. */
  runAt?: Date | undefined;
  /** A fixed id makes enqueueing idempotent (schedule ticks); random by default. */
  id?: string | undefined;
  /** After this time no retry is scheduled and a failure makes the job `dead`. */
  deadline?: Date | undefined;
  /** Claims allowed; unlimited when a deadline is given, DEFAULT_MAX_ATTEMPTS otherwise. */
  maxAttempts?: number | undefined;
  /** Jobs with the same key run one at a time, in the order they were enqueued. */
  orderingKey?: string | undefined;
}

export const DEFAULT_MAX_ATTEMPTS = 10;
/** Retry delays double from this (first retry 10–20 s: Contract, "first retry within 30 s")… */
export const RETRY_BASE_MS = 20_000;
/** …up to this ceiling, jittered; a deadline cuts the series (webhooks: 24 hours). */
export const RETRY_MAX_MS = 3 * 3_600_000;

export interface EnqueuedJob {
  id: string;
  /** Its place in its lane (null without `orderingKey`). */
  orderingSeq: number | null;
}

/** A job as its worker sees it after claiming it. */
export interface ClaimedJob {
  id: string;
  type: string;
  payload: JobPayload;
  /** This claim's number, 1 for the first: claims are attempts even when a worker dies mid-way. */
  attempts: number;
  maxAttempts: number | null;
  deadlineAt: Date | null;
  orderingKey: string | null;
  orderingSeq: number | null;
  lockedBy: string;
  leaseUntil: Date;
  createdAt: Date;
}

export type FailOutcome =
  | { outcome: 'retry'; runAt: Date }
  | { outcome: 'dead' }
  /** The lease had expired and another claim owns the job now: nothing was changed. */
  | { outcome: 'lost' };

/**
 * Enqueues a job inside the caller's transaction, so the job exists exactly when the change that
 * asks for it commits (DESIGN: events go into the same transaction). In a transaction of
 * `writeTransaction` the workers are woken once it has committed, otherwise at once (and again shortly).
 *
 * ```ts
 * await writeTransaction(db, dialect, async (trx) => {
 *   await trx.insertInto('webhook_deliveries').values(delivery).execute();
 *   await enqueue(trx, { type: 'webhook.deliver', payload: { deliveryId }, now, orderingKey: `webhook:${id}` });
 * });
 * ```
 */
export async function enqueue(trx: Kysely<Database>, options: EnqueueOptions): Promise<EnqueuedJob> {
  const now = options.now.toISOString();
  const id = options.id ?? randomUUID();
  let runAt: string | null = (options.runAt ?? options.now).toISOString();
  let orderingSeq: number | null = null;
  if (options.orderingKey !== undefined) {
    // Locks the lane's row until the caller commits: enqueues to one lane take their sequence
    // numbers in commit order, and the head's hand-off (which locks the same row) sees this job.
    const lane = await trx
      .insertInto('job_lanes')
      .values({ key: options.orderingKey, last_seq: 1, active: 1, updated_at: now })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet((eb) => ({
          last_seq: eb('job_lanes.last_seq', '+', 1),
          active: eb('job_lanes.active', '+', 1),
          updated_at: now,
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
      id,
      type: options.type,
      payload: writeJson(options.payload),
      status: 'queued',
      run_at: runAt,
      attempts: 0,
      max_attempts: options.maxAttempts ?? (options.deadline === undefined ? DEFAULT_MAX_ATTEMPTS : null),
      deadline_at: options.deadline?.toISOString() ?? null,
      locked_by: null,
      lease_until: null,
      last_error: null,
      ordering_key: options.orderingKey ?? null,
      ordering_seq: orderingSeq,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) await ringDoorbellWith(trx);
  return { id, orderingSeq };
}

export interface ClaimOptions {
  workerId: string;
  /** Only jobs of these types: a worker claims nothing it has no handler for. */
  types: readonly string[];
  limit: number;
  now: Date;
  leaseMs: number;
  /** Whether to look for expired leases first (default true); workers do it about once a second. */
  sweep?: boolean | undefined;
}

/**
 * Claims up to `limit` due jobs for one worker. First, jobs whose lease expired (their worker died
 * or hung) go back to `queued`; then due jobs become `running` with a fresh lease, in one statement:
 * on PostgreSQL `FOR UPDATE SKIP LOCKED` lets concurrent workers pass each other's rows; on SQLite
 * the claim runs under `BEGIN IMMEDIATE`, so one writer claims at a time across processes too.
 */
export async function claimJobs(
  db: Kysely<Database>,
  dialect: SqlDialect,
  options: ClaimOptions,
): Promise<ClaimedJob[]> {
  if (options.types.length === 0 || options.limit < 1) return [];
  const now = options.now.toISOString();
  const leaseUntil = new Date(options.now.getTime() + options.leaseMs).toISOString();
  const claim = async (trx: Kysely<Database>) => {
    if (options.sweep !== false) await sweepExpiredLeases(trx, now);
    return trx
      .updateTable('jobs')
      .set((eb) => ({
        status: 'running',
        locked_by: options.workerId,
        lease_until: leaseUntil,
        attempts: eb('attempts', '+', 1),
        updated_at: now,
      }))
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('jobs')
          .select('id')
          .where('status', '=', 'queued')
          .where('run_at', '<=', now)
          .where('type', 'in', [...options.types])
          .orderBy('run_at')
          .orderBy('id')
          .limit(options.limit)
          .$if(dialect.skipLocked, (qb) => qb.forUpdate().skipLocked()),
      )
      .returningAll()
      .execute();
  };
  // PostgreSQL: autocommit statements, each atomic, none waiting on another worker's rows.
  const rows = dialect.skipLocked ? await claim(db) : await writeTransaction(db, dialect, claim);
  return rows.map(claimedJob).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
}

/** Jobs whose worker died or hung go back to `queued`, due now; the claim counted as an attempt. */
async function sweepExpiredLeases(trx: Kysely<Database>, now: string): Promise<void> {
  await trx
    .updateTable('jobs')
    .set({
      status: 'queued',
      run_at: now,
      locked_by: null,
      lease_until: null,
      last_error: 'the worker stopped before finishing (lease expired)',
      updated_at: now,
    })
    .where('status', '=', 'running')
    .where('lease_until', '<=', now)
    .execute();
}

function claimedJob(row: Selectable<JobTable>): ClaimedJob {
  return {
    id: row.id,
    type: row.type,
    payload: readJson<JobPayload>(row.payload, {}),
    attempts: Number(row.attempts),
    maxAttempts: row.max_attempts === null ? null : Number(row.max_attempts),
    deadlineAt: row.deadline_at === null ? null : new Date(row.deadline_at),
    orderingKey: row.ordering_key,
    orderingSeq: row.ordering_seq === null ? null : Number(row.ordering_seq),
    lockedBy: row.locked_by ?? '',
    leaseUntil: new Date(row.lease_until ?? 0),
    createdAt: new Date(row.created_at),
  };
}

/**
 * Lets a worker finishing a lane's head take the lane's next job in the same transaction, instead of
 * releasing it for the next claim: one commit less per job of a busy lane. `take` receives the job
 * now claimed for `workerId`; it is the worker's only once the transaction commits.
 */
export interface HandOff {
  workerId: string;
  leaseMs: number;
  types: readonly string[];
  take(job: ClaimedJob): void;
}

/** Marks a claimed job done. False when the claim was lost (lease expired, another worker has it). */
export async function completeJob(
  trx: Kysely<Database>,
  job: ClaimedJob,
  now: Date,
  handOff?: HandOff,
): Promise<boolean> {
  return finish(trx, job, now, 'done', null, handOff);
}

/**
 * Records a failed attempt: the job is queued again after an exponential, jittered delay, or goes
 * to `dead` when `retry` is false, its attempts are used up or its deadline has passed. The last
 * retry is scheduled at the deadline itself, so a job is tried for its whole window.
 */
export async function failJob(
  trx: Kysely<Database>,
  job: ClaimedJob,
  error: string,
  now: Date,
  options: { retry?: boolean | undefined; random?: () => number; handOff?: HandOff | undefined } = {},
): Promise<FailOutcome> {
  const message = error.slice(0, 1000);
  const next = afterFailure(job, now, options);
  if (next.outcome === 'dead') {
    return (await finish(trx, job, now, 'dead', message, options.handOff))
      ? { outcome: 'dead' }
      : { outcome: 'lost' };
  }
  const result = await ownedBy(trx.updateTable('jobs'), job)
    .set({
      status: 'queued',
      run_at: next.runAt.toISOString(),
      locked_by: null,
      lease_until: null,
      last_error: message,
      updated_at: now.toISOString(),
    })
    .executeTakeFirst();
  return result.numUpdatedRows > 0n ? next : { outcome: 'lost' };
}

/** Whether a failed job is retried (and when) or dead. */
function afterFailure(
  job: ClaimedJob,
  now: Date,
  options: { retry?: boolean | undefined; random?: (() => number) | undefined },
): { outcome: 'retry'; runAt: Date } | { outcome: 'dead' } {
  const exhausted = job.maxAttempts !== null && job.attempts >= job.maxAttempts;
  const expired = job.deadlineAt !== null && now.getTime() >= job.deadlineAt.getTime();
  if (options.retry === false || exhausted || expired) return { outcome: 'dead' };
  let runAt = new Date(now.getTime() + retryDelayMs(job.attempts, options.random));
  if (job.deadlineAt !== null && runAt > job.deadlineAt) runAt = job.deadlineAt;
  return { outcome: 'retry', runAt };
}

/** Delay before retry number `attempt` (1-based): 20 s · 2^(attempt−1), capped, then halved at random. */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.min(Math.max(attempt, 1) - 1, 30));
  // "Equal jitter": never less than half the ceiling, so the intervals still grow, yet workers
  // retrying after one outage spread out instead of arriving together.
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

/** Keeps a long-running job's claim alive. False when it was lost. */
export async function extendLease(
  db: Kysely<Database>,
  job: ClaimedJob,
  now: Date,
  leaseMs: number,
): Promise<boolean> {
  const leaseUntil = new Date(now.getTime() + leaseMs);
  const result = await ownedBy(db.updateTable('jobs'), job)
    .set({ lease_until: leaseUntil.toISOString(), updated_at: now.toISOString() })
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) return false;
  job.leaseUntil = leaseUntil;
  return true;
}

/** Makes a job that waits for its next retry due now. False when it is not waiting for a retry. */
export async function runNow(trx: Kysely<Database>, jobId: string, now: Date): Promise<boolean> {
  const result = await trx
    .updateTable('jobs')
    .set({ run_at: now.toISOString(), updated_at: now.toISOString() })
    .where('id', '=', jobId)
    .where('status', '=', 'queued')
    .where('run_at', '>', now.toISOString())
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) return false;
  await ringDoorbellWith(trx);
  return true;
}

/**
 * Deletes a lane and every job in it, finished or not (a deleted webhook). A worker still running
 * one of them finds its claim lost when it settles.
 */
export async function deleteLane(trx: Kysely<Database>, orderingKey: string): Promise<void> {
  await trx.deleteFrom('job_lanes').where('key', '=', orderingKey).execute();
  await trx.deleteFrom('jobs').where('ordering_key', '=', orderingKey).execute();
}

type JobUpdate = UpdateQueryBuilder<Database, 'jobs', 'jobs', UpdateResult>;

/** Narrows an update to the job as this claim holds it: a lost claim changes nothing. */
function ownedBy(query: JobUpdate, job: ClaimedJob): JobUpdate {
  return query
    .where('id', '=', job.id)
    .where('status', '=', 'running')
    .where('locked_by', '=', job.lockedBy)
    .where('attempts', '=', job.attempts);
}

async function finish(
  trx: Kysely<Database>,
  job: ClaimedJob,
  now: Date,
  status: 'done' | 'dead',
  error: string | null,
  handOff?: HandOff,
): Promise<boolean> {
  const at = now.toISOString();
  const lane = job.orderingKey !== null && job.orderingSeq !== null ? job.orderingKey : undefined;
  const countInLane = (change: '+' | '-') =>
    trx
      .updateTable('job_lanes')
      .set((eb) => ({ active: eb('active', change, 1), updated_at: at }))
      .where('key', '=', lane ?? '')
      .returning('active')
      .executeTakeFirst();
  // Lane row first, as enqueue does: one lock order, so the two never deadlock.
  const left = lane === undefined ? undefined : await countInLane('-');
  const result = await ownedBy(trx.updateTable('jobs'), job)
    .set({ status, run_at: null, lease_until: null, last_error: error, updated_at: at })
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) {
    if (lane !== undefined) await countInLane('+');
    return false;
  }
  if (lane !== undefined && Number(left?.active ?? 0) > 0) {
    // The lane's next job becomes due (or, handed off, claimed at once). Only the head of a lane
    // ever runs, so every job after it is still waiting and the next is the first after this one.
    // The lookup names the lane's columns only, so it walks the lane's index and never the (long,
    // under a backlog) list of waiting jobs.
    const next = trx
      .updateTable('jobs')
      .where('id', '=', (eb) =>
        eb
          .selectFrom('jobs')
          .select('id')
          .where('ordering_key', '=', lane)
          .where('ordering_seq', '>', job.orderingSeq)
          .orderBy('ordering_seq')
          .limit(1),
      )
      .where('status', '=', 'queued')
      .where('run_at', 'is', null);
    if (handOff) {
      const taken = await next
        .where('type', 'in', [...handOff.types])
        .set((eb) => ({
          status: 'running',
          run_at: at,
          locked_by: handOff.workerId,
          lease_until: new Date(now.getTime() + handOff.leaseMs).toISOString(),
          attempts: eb('attempts', '+', 1),
          updated_at: at,
        }))
        .returningAll()
        .executeTakeFirst();
      if (taken) {
        handOff.take(claimedJob(taken));
        return true;
      }
    }
    const due = await next.set({ run_at: at, updated_at: at }).executeTakeFirst();
    if (due.numUpdatedRows > 0n) await ringDoorbellWith(trx);
  }
  return true;
}

/** A row that must commit together with a job's outcome (a delivery attempt): both, or neither. */
export type RecordedRow = {
  [T in keyof Database]: { into: T; values: Insertable<Database[T]> };
}[keyof Database];

export interface Settlement {
  /** null: the job is done; otherwise why it failed (retried or dead, as in failJob). */
  error: string | null;
  /** Written with the outcome, also when the claim turns out lost: the attempt did happen. */
  record?: RecordedRow | undefined;
}

export type SettleOutcome = { outcome: 'done' } | FailOutcome;

/** One claimed job to settle, and whether its lane's next job may be handed to its worker. */
export interface SettleRequest {
  job: ClaimedJob;
  settlement: Settlement;
  handOff?: HandOff | undefined;
}

/** What became of one request of a batch: its outcome, or the error that kept it from being written. */
export type SettleResult = { ok: true; outcome: SettleOutcome } | { ok: false; error: Error };

/** A request with its outcome decided: what the statement or transaction writes. */
interface PlannedSettlement {
  job: ClaimedJob;
  record: RecordedRow | undefined;
  handOff: HandOff | undefined;
  /** The trimmed failure text, null when the job is done. */
  error: string | null;
  next: SettleOutcome;
}

// A PostgreSQL settlement that met its lane changed under it is written again this often, then in a
// transaction.
const SETTLE_TRIES = 3;

/**
 * Settles several claimed jobs at once (a worker's jobs that finished while its previous settlement
 * was being written), each with its record: on PostgreSQL in one statement for all of them, which is
 * atomic by itself and costs one round trip instead of one per job (or a transaction's six each); on
 * SQLite in one write transaction, so one commit (one fsync) for all. When the batch cannot be
 * written (one record breaks a constraint, say), each job is settled alone, so one job's error
 * reaches that job only. Never throws: each request gets its outcome or its error, in order.
 * Two requests for jobs of one lane belong in different batches (the lane is locked once per batch).
 */
export async function settleJobs(
  db: Kysely<Database>,
  dialect: SqlDialect,
  requests: readonly SettleRequest[],
  now: Date,
  options: { random?: (() => number) | undefined } = {},
): Promise<SettleResult[]> {
  const plans = requests.map((request): PlannedSettlement => {
    const error = request.settlement.error?.slice(0, 1000) ?? null;
    return {
      job: request.job,
      record: request.settlement.record,
      handOff: request.handOff,
      error,
      next: error === null ? { outcome: 'done' } : afterFailure(request.job, now, options),
    };
  });
  const results: SettleResult[] = [];
  let pending = plans.map((_, index) => index);
  if (dialect.name === 'postgres') {
    for (let tries = 0; tries < SETTLE_TRIES && pending.length > 0; tries++) {
      let settled: Map<number, boolean>;
      try {
        settled = await settleInOneStatement(
          db,
          pending.map((index) => plans[index] as PlannedSettlement),
          now,
        );
      } catch {
        // Settled alone below, where the request at fault gets its own error.
        break;
      }
      pending = pending.filter((index, position) => {
        const written = settled.get(position);
        // Absent: its lane changed under the statement; it is written again.
        if (written === undefined) return true;
        const plan = plans[index] as PlannedSettlement;
        results[index] = { ok: true, outcome: written ? plan.next : { outcome: 'lost' } };
        return false;
      });
    }
  }
  if (pending.length > 1) {
    const chosen = pending.map((index) => plans[index] as PlannedSettlement);
    try {
      const outcomes = await settleInTransaction(db, dialect, chosen, now, options);
      pending.forEach((index, position) => {
        results[index] = { ok: true, outcome: outcomes[position] as SettleOutcome };
      });
      pending = [];
    } catch {
      // Settled alone below.
    }
  }
  for (const index of pending) {
    try {
      const [outcome] = await settleInTransaction(
        db,
        dialect,
        [plans[index] as PlannedSettlement],
        now,
        options,
      );
      results[index] = { ok: true, outcome: outcome as SettleOutcome };
    } catch (error) {
      results[index] = { ok: false, error: error instanceof Error ? error : new Error(String(error)) };
    }
  }
  return results;
}

/**
 * The settlements in one write transaction, one after the other. Jobs handed off are given to their
 * workers only once the transaction has committed: a rolled-back hand-off claimed nothing.
 */
async function settleInTransaction(
  db: Kysely<Database>,
  dialect: SqlDialect,
  plans: readonly PlannedSettlement[],
  now: Date,
  options: { random?: (() => number) | undefined },
): Promise<SettleOutcome[]> {
  const taken: (() => void)[] = [];
  const deferred = (handOff: HandOff | undefined): HandOff | undefined =>
    handOff && { ...handOff, take: (job) => taken.push(() => handOff.take(job)) };
  const outcomes = await writeTransaction(db, dialect, async (trx) => {
    const written: SettleOutcome[] = [];
    for (const plan of plans) {
      if (plan.record) await insertRecord(trx, plan.record);
      const handOff = deferred(plan.handOff);
      if (plan.error === null) {
        written.push((await completeJob(trx, plan.job, now, handOff)) ? plan.next : { outcome: 'lost' });
      } else {
        const retry = plan.next.outcome === 'retry';
        written.push(await failJob(trx, plan.job, plan.error, now, { ...options, retry, handOff }));
      }
    }
    return written;
  });
  for (const take of taken) take();
  return outcomes;
}

function insertRecord(trx: Kysely<Database>, record: RecordedRow): Promise<unknown> {
  return trx.insertInto(record.into).values(record.values).execute();
}

/**
 * The settlements as one PostgreSQL statement: for each job, its update and its record, and for a
 * lane's head that finishes, the lane's count and its next job (made due, or handed off) — what
 * `finish` does in three statements per job. The jobs travel as arrays, one element per job, and
 * the records as JSON, typed by their table's row type, so the statement's text depends only on
 * which tables get records: it is prepared once.
 *
 * A statement reads one snapshot, taken before it waits for the lanes' locks: had an enqueue to a
 * lane committed in between, its job would be invisible here. That matters only when the snapshot
 * shows the head no next job (an invisible job comes after every visible one: sequence numbers are
 * taken under the lane's lock, in commit order); then the lane's `last_seq` as of the snapshot is
 * compared with the one locked (the latest), and when they differ the job is left out — nothing of
 * it is written — to be written again with a snapshot that sees the new job. Lock order as in
 * `finish`: lanes (in key order, as emitters take them), then jobs.
 *
 * The planner cannot know how many jobs a batch holds; the `= any(array)` conditions beside the
 * joins let it look rows up by key instead of scanning the jobs table (whose size grows with the
 * backlog).
 *
 * Returns, for each plan's slot, whether its job was settled (false: the claim was lost); a
 * slot is absent when its lane changed.
 */
async function settleInOneStatement(
  db: Kysely<Database>,
  plans: readonly PlannedSettlement[],
  now: Date,
): Promise<Map<number, boolean>> {
  const at = now.toISOString();
  const column = <T>(value: (plan: PlannedSettlement) => T): T[] => plans.map(value);
  const finishingLane = (plan: PlannedSettlement) =>
    plan.next.outcome !== 'retry' && plan.job.orderingSeq !== null ? plan.job.orderingKey : null;
  const ids = column((p) => p.job.id);
  const lanesOfPlans = column(finishingLane);
  const lanes = lanesOfPlans.filter((lane) => lane !== null);
  const recordSteps = recordInserts(plans);
  const result = await sql<Selectable<JobTable> & { slot: number; ok: boolean; settled: boolean }>`
    with batch as materialized (
      select * from unnest(
        ${plans.map((_, slot) => slot)}::int[],
        ${ids}::text[],
        ${column((p) => p.job.lockedBy)}::text[],
        ${column((p) => p.job.attempts)}::int[],
        ${column((p) => (p.next.outcome === 'retry' ? 'queued' : p.next.outcome === 'done' ? 'done' : 'dead'))}::text[],
        ${column((p) => (p.next.outcome === 'retry' ? p.next.runAt.toISOString() : null))}::timestamptz[],
        ${column((p) => p.error)}::text[],
        ${lanesOfPlans}::text[],
        ${column((p) => p.job.orderingSeq)}::bigint[],
        ${column((p) => p.handOff?.workerId ?? null)}::text[],
        ${column((p) => (p.handOff ? new Date(now.getTime() + p.handOff.leaseMs).toISOString() : null))}::timestamptz[],
        ${column((p) => JSON.stringify(p.handOff?.types ?? []))}::jsonb[]
      ) as i (slot, id, locked_by, attempts, status, run_at, error, lane, seq, taker, lease_until, take_types)
    ),
    seen as materialized (select key, last_seq from job_lanes where key = any(${lanes}::text[])),
    locked as materialized (
      select key, last_seq from job_lanes where key = any(${lanes}::text[]) order by key for update
    ),
    -- Each finishing head's next job as the snapshot sees it.
    candidate as materialized (
      select i.slot, n.id, n.type, n.status, n.run_at
      from batch i
      cross join lateral (
        select id, type, status, run_at from jobs
        where ordering_key = i.lane and ordering_seq > i.seq
        order by ordering_seq limit 1
      ) n
      where i.lane is not null
    ),
    -- Joined, not looked up only when needed: every lane is locked (in key order) whether or not
    -- its head needs the comparison, before any job is written.
    ok as materialized (
      select i.* from batch i
      left join seen s on s.key = i.lane
      left join locked l on l.key = i.lane
      where i.lane is null
        or exists (select from candidate c where c.slot = i.slot)
        or s.last_seq is not distinct from l.last_seq
    ),
    job as (
      update jobs j set
        status = ok.status,
        run_at = ok.run_at,
        locked_by = case when ok.status = 'queued' then null else j.locked_by end,
        lease_until = null,
        last_error = ok.error,
        updated_at = ${at}
      from ok
      where j.id = any(${ids}::text[])
        and j.id = ok.id and j.status = 'running' and j.locked_by = ok.locked_by and j.attempts = ok.attempts
      returning ok.slot
    ),
    lane as (
      update job_lanes l set active = l.active - 1, updated_at = ${at}
      from ok
      where l.key = any(${lanes}::text[]) and l.key = ok.lane and ok.slot in (select slot from job)
      returning ok.slot, l.active
    ),
    successor as (
      select ok.slot, ok.taker, ok.lease_until, c.id, c.status, c.run_at,
        (ok.taker is not null and ok.take_types ? c.type) as take
      from lane
      join ok on ok.slot = lane.slot
      join candidate c on c.slot = lane.slot
      where lane.active > 0 and c.status = 'queued' and c.run_at is null
    ),
    next as (
      update jobs j set
        status = case when f.take then 'running' else j.status end,
        run_at = ${at},
        locked_by = case when f.take then f.taker else j.locked_by end,
        lease_until = case when f.take then f.lease_until else j.lease_until end,
        attempts = case when f.take then j.attempts + 1 else j.attempts end,
        updated_at = ${at}
      from successor f
      where j.id = f.id and j.status = f.status and j.run_at is not distinct from f.run_at
      returning j.*, f.slot as after_slot
    ),
    -- A next job made due rather than taken wakes the workers of every node, as an enqueue does.
    woken as (select ${NOTIFY_WORKERS} where exists (select from next where status = 'queued'))
    ${recordSteps}
    select i.slot,
      i.slot in (select slot from ok) as ok,
      i.slot in (select slot from job) as settled,
      (select count(*) from woken) as woken,
      n.*
    from batch i left join next n on n.after_slot = i.slot
    order by i.slot`.execute(db);
  const settled = new Map<number, boolean>();
  for (const row of result.rows) {
    if (!row.ok) continue;
    settled.set(Number(row.slot), row.settled);
    const handOff = plans[Number(row.slot)]?.handOff;
    if (handOff && row.id !== null && row.status === 'running') handOff.take(claimedJob(row));
  }
  return settled;
}

/**
 * One insert per table (and set of columns) that gets records, each written only for the jobs whose
 * settlement is (`ok`). The rows travel as one JSON array per insert; `json_populate_record` turns
 * each element into the table's row type, so the values keep their columns' types.
 */
function recordInserts(plans: readonly PlannedSettlement[]): RawBuilder<unknown> {
  const groups = new Map<string, { into: string; columns: string[]; rows: Record<string, unknown>[] }>();
  plans.forEach((plan, slot) => {
    if (!plan.record) return;
    const columns = Object.keys(plan.record.values).sort();
    const key = `${plan.record.into}(${columns.join(',')})`;
    const group = groups.get(key) ?? { into: plan.record.into, columns, rows: [] };
    group.rows.push({ ...plan.record.values, [SLOT_KEY]: slot });
    groups.set(key, group);
  });
  if (groups.size === 0) return sql``;
  return sql.join(
    [...groups.values()].map(
      (group, index) => sql`, ${sql.raw(`record_${index}`)} as (
        insert into ${sql.table(group.into)} (${sql.join(group.columns.map((c) => sql.ref(c)))})
        select ${sql.join(group.columns.map((c) => sql`(r.rec).${sql.ref(c)}`))}
        from (
          select json_populate_record(null::${sql.table(group.into)}, e) as rec, (e ->> ${SLOT_KEY})::int as slot
          from json_array_elements(${JSON.stringify(group.rows)}::json) e
        ) r
        where r.slot in (select slot from ok)
      )`,
    ),
    sql``,
  );
}

// The key that ties a record to its job's slot in a batch; not a column of any table.
const SLOT_KEY = '__settled_slot';

/** Gives back a claim without counting it as an attempt: the job is due again at once. */
export async function releaseJob(db: Kysely<Database>, job: ClaimedJob, now: Date): Promise<boolean> {
  const result = await ownedBy(db.updateTable('jobs'), job)
    .set((eb) => ({
      status: 'queued',
      run_at: now.toISOString(),
      locked_by: null,
      lease_until: null,
      attempts: eb('attempts', '-', 1),
      updated_at: now.toISOString(),
    }))
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) return false;
  await ringDoorbellWith(db);
  return true;
}
