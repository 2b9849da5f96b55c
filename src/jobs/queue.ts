import { randomUUID } from 'node:crypto';
import {
  type ExpressionBuilder,
  type Kysely,
  type Selectable,
  type UpdateQueryBuilder,
  type UpdateResult,
} from 'kysely';
import { writeTransaction, type SqlDialect } from '../store/db/dialect.js';
import { readJson, writeJson } from '../store/db/json.js';
import {
  insertQueuedJob,
  type JobSettlement,
  type RecordedRow,
  type SettlementRow,
} from '../store/db/job-rows.js';
import type { Database, JobTable } from '../store/db/schema.js';
import { ringDoorbellWith } from './doorbell.js';

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
 * dead one lets the next go (skip ahead). The worker holding a lane's head may run the jobs waiting
 * behind it before the head is settled (readAhead: nobody else can take them), and settles them with
 * it (SettleRequest.followers).
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
  /**
   * The id of the HTTP request whose change enqueues the job (`request.id`, `actor.requestId`): the
   * worker's log lines about the job carry it as `reqId`, so one id leads from a request to the work
   * it caused. Kept in the payload under `requestId` (a name no job type may use for its own).
   */
  requestId?: string | undefined;
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
  /** As enqueued, without `requestId`. */
  payload: JobPayload;
  /** The id of the request that enqueued the job (EnqueueOptions.requestId), null when none did. */
  requestId: string | null;
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
  const id = options.id ?? randomUUID();
  const { inserted, orderingSeq } = await insertQueuedJob(trx, {
    id,
    type: options.type,
    payload: writeJson(
      options.requestId === undefined
        ? options.payload
        : { ...options.payload, requestId: options.requestId },
    ),
    runAt: (options.runAt ?? options.now).toISOString(),
    maxAttempts: options.maxAttempts ?? (options.deadline === undefined ? DEFAULT_MAX_ATTEMPTS : null),
    deadlineAt: options.deadline?.toISOString() ?? null,
    orderingKey: options.orderingKey ?? null,
    now: options.now.toISOString(),
  });
  if (inserted) await ringDoorbellWith(trx);
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

/**
 * Claims one queued job by its id, due or not, for `workerId`: the request that enqueued a follow-up
 * runs it at once itself (a seal on completion) while the queue keeps it durable, should the request
 * fail or its process die (the claim's lease then runs out and a worker takes the job). One statement,
 * atomic on both dialects: of a request and a worker, one gets the job. Undefined when it is not queued
 * (a worker has it, or it is finished). Not for jobs of a lane: their order belongs to the lane.
 */
export async function claimJobById(
  db: Kysely<Database>,
  options: { id: string; workerId: string; now: Date; leaseMs: number },
): Promise<ClaimedJob | undefined> {
  const now = options.now.toISOString();
  const row = await db
    .updateTable('jobs')
    .set((eb) => ({
      status: 'running',
      locked_by: options.workerId,
      lease_until: new Date(options.now.getTime() + options.leaseMs).toISOString(),
      attempts: eb('attempts', '+', 1),
      updated_at: now,
    }))
    .where('id', '=', options.id)
    .where('status', '=', 'queued')
    .where('ordering_key', 'is', null)
    .returningAll()
    .executeTakeFirst();
  return row ? claimedJob(row) : undefined;
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
  const { requestId, ...payload } = readJson<JobPayload>(row.payload, {});
  return {
    id: row.id,
    type: row.type,
    payload,
    requestId: typeof requestId === 'string' ? requestId : null,
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
 * The jobs waiting behind `after` in its lane, in lane order, up to `limit` and up to the first of
 * a type not in `types`, as their next attempt sees them (`attempts` counts it; `lockedBy` is
 * empty: nobody claims them). A worker that holds `after`'s claim may run them before settling it:
 * a lane's later jobs wait (`run_at` null) until the job before them finishes, so no other worker
 * can take them meanwhile. They are then settled with it (SettleRequest.followers).
 */
export async function readAhead(
  db: Kysely<Database>,
  after: ClaimedJob,
  types: readonly string[],
  limit: number,
): Promise<ClaimedJob[]> {
  if (after.orderingKey === null || after.orderingSeq === null || limit < 1) return [];
  const rows = await db
    .selectFrom('jobs')
    .selectAll()
    .where('ordering_key', '=', after.orderingKey)
    .where('ordering_seq', '>', after.orderingSeq)
    .orderBy('ordering_seq')
    .limit(limit)
    .execute();
  const ahead: ClaimedJob[] = [];
  for (const row of rows) {
    if (row.status !== 'queued' || row.run_at !== null || !types.includes(row.type)) break;
    ahead.push({ ...claimedJob(row), attempts: Number(row.attempts) + 1, lockedBy: '' });
  }
  return ahead;
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
  /**
   * `laneLastSeq`: the lane's last sequence number as the hand-off saw it — jobs up to it were
   * enqueued, so those after `job` wait behind it (worth reading ahead).
   */
  take(job: ClaimedJob, laneLastSeq: number): void;
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
      .returning(['active', 'last_seq'])
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
        handOff.take(claimedJob(taken), Number(left?.last_seq));
        return true;
      }
    }
    const due = await next.set({ run_at: at, updated_at: at }).executeTakeFirst();
    if (due.numUpdatedRows > 0n) await ringDoorbellWith(trx);
  }
  return true;
}

export type { RecordedRow };

export interface Settlement {
  /** null: the job is done; otherwise why it failed (retried or dead, as in failJob). */
  error: string | null;
  /** Written with the outcome, also when the claim turns out lost: the attempt did happen. */
  record?: RecordedRow | undefined;
}

export type SettleOutcome = { outcome: 'done' } | FailOutcome;

/** A job that ran, and how it went. */
export interface Attempted {
  job: ClaimedJob;
  settlement: Settlement;
}

/** One claimed job to settle, and whether its lane's next job may be handed to its worker. */
export interface SettleRequest extends Attempted {
  handOff?: HandOff | undefined;
  /**
   * Jobs of `job`'s lane that its worker ran after it, in lane order, before its settlement was
   * written (see readAhead). They are settled with it when its claim holds and every one of them
   * still waits, and the hand-off then follows the last; otherwise none of them is written (their
   * outcomes are `lost`). Only the last of the run may fail.
   */
  followers?: readonly Attempted[] | undefined;
}

/** How one request was written: its job's outcome and its followers' (SettleRequest.followers). */
export interface Settled {
  outcome: SettleOutcome;
  followers: SettleOutcome[];
}

/** What became of one request of a batch: how it was written, or the error that kept it from that. */
export type SettleResult = ({ ok: true } & Settled) | { ok: false; error: Error };

/** One job of a request with its outcome decided. */
interface PlannedAttempt {
  job: ClaimedJob;
  record: RecordedRow | undefined;
  /** The trimmed failure text, null when the job is done. */
  error: string | null;
  next: SettleOutcome;
}

/** A request with its outcomes decided: what the statement or transaction writes. */
interface PlannedSettlement {
  head: PlannedAttempt;
  followers: PlannedAttempt[];
  handOff: HandOff | undefined;
}

/** A settlement's outcome when the claim was lost or the job was not written. */
export const LOST: SettleOutcome = { outcome: 'lost' };

// A PostgreSQL settlement that met its lane changed under it is written again this often, then in a
// transaction.
const SETTLE_TRIES = 3;

/**
 * Settles several claimed jobs at once (a worker's jobs that finished while its previous settlement
 * was being written), each with its record and its followers: on PostgreSQL in one statement for all
 * of them, which is atomic by itself and costs one round trip instead of one per job (or a
 * transaction's six each); on SQLite in one write transaction, so one commit (one fsync) for all.
 * When the batch cannot be written (one record breaks a constraint, say), each request is settled
 * alone, so one job's error reaches that request only. Never throws: each request gets its outcomes
 * or its error, in order. Two requests for jobs of one lane belong in different batches (the lane is
 * locked once per batch).
 */
export async function settleJobs(
  db: Kysely<Database>,
  dialect: SqlDialect,
  requests: readonly SettleRequest[],
  now: Date,
  options: { random?: (() => number) | undefined } = {},
): Promise<SettleResult[]> {
  const results: SettleResult[] = [];
  const plans: (PlannedSettlement | Error)[] = [];
  let pending: number[] = [];
  requests.forEach((request, index) => {
    const plan = planSettlement(request, now, options);
    plans[index] = plan;
    if (plan instanceof Error) results[index] = { ok: false, error: plan };
    else pending.push(index);
  });
  const planOf = (index: number) => plans[index] as PlannedSettlement;
  const written = (index: number, settled: readonly boolean[]): SettleResult => {
    const plan = planOf(index);
    return {
      ok: true,
      outcome: settled[0] ? plan.head.next : LOST,
      followers: plan.followers.map((follower, position) => (settled[position + 1] ? follower.next : LOST)),
    };
  };
  const oneStatement = dialect.jobSettlement.settleInOneStatement;
  if (oneStatement) {
    for (let tries = 0; tries < SETTLE_TRIES && pending.length > 0; tries++) {
      let settled: Map<number, boolean[]>;
      try {
        settled = await settleInOneStatement(db, oneStatement, pending.map(planOf), now);
      } catch {
        // Settled alone below, where the request at fault gets its own error.
        break;
      }
      pending = pending.filter((index, position) => {
        const slot = settled.get(position);
        // Absent: its lane changed under the statement; it is written again.
        if (slot === undefined) return true;
        results[index] = written(index, slot);
        return false;
      });
    }
  }
  if (pending.length > 1) {
    try {
      const settled = await settleInTransaction(db, dialect, pending.map(planOf), now, options);
      pending.forEach((index, position) => {
        results[index] = written(index, settled[position] as boolean[]);
      });
      pending = [];
    } catch {
      // Settled alone below.
    }
  }
  for (const index of pending) {
    try {
      const [settled] = await settleInTransaction(db, dialect, [planOf(index)], now, options);
      results[index] = written(index, settled as boolean[]);
    } catch (error) {
      results[index] = { ok: false, error: error instanceof Error ? error : new Error(String(error)) };
    }
  }
  return results;
}

/** A request's outcomes, or why it cannot be written (a run that goes on after a job to retry). */
function planSettlement(
  request: SettleRequest,
  now: Date,
  options: { random?: (() => number) | undefined },
): PlannedSettlement | Error {
  const plan = (attempted: Attempted): PlannedAttempt => {
    const error = attempted.settlement.error?.slice(0, 1000) ?? null;
    return {
      job: attempted.job,
      record: attempted.settlement.record,
      error,
      next: error === null ? { outcome: 'done' } : afterFailure(attempted.job, now, options),
    };
  };
  const head = plan(request);
  const followers = (request.followers ?? []).map(plan);
  const run = [head, ...followers];
  // A job to retry holds its lane: nothing after it may have been run.
  if (run.slice(0, -1).some((attempt) => attempt.next.outcome === 'retry'))
    return new Error('a run of a lane goes on after a job that is to be retried');
  if (followers.some((follower) => follower.job.orderingKey !== head.job.orderingKey))
    return new Error('a follower belongs to another lane than the job it follows');
  return { head, followers, handOff: request.handOff };
}

/**
 * The settlements in one write transaction, one after the other. A request's followers are first
 * claimed for its job's worker (when its claim holds and all of them wait), then settled one after
 * the other like claimed jobs: finishing each makes nothing due, as the next is running, until the
 * last. Jobs handed off are given to their workers only once the transaction has committed: a
 * rolled-back hand-off claimed nothing. Returns, per request, which of its jobs were settled (its
 * own first).
 */
async function settleInTransaction(
  db: Kysely<Database>,
  dialect: SqlDialect,
  plans: readonly PlannedSettlement[],
  now: Date,
  options: { random?: (() => number) | undefined },
): Promise<boolean[][]> {
  const taken: (() => void)[] = [];
  const deferred = (handOff: HandOff | undefined): HandOff | undefined =>
    handOff && { ...handOff, take: (job, lastSeq) => taken.push(() => handOff.take(job, lastSeq)) };
  const settle = async (trx: Kysely<Database>, attempt: PlannedAttempt, handOff: HandOff | undefined) => {
    if (attempt.error === null) return completeJob(trx, attempt.job, now, handOff);
    const retry = attempt.next.outcome === 'retry';
    const outcome = await failJob(trx, attempt.job, attempt.error, now, { ...options, retry, handOff });
    return outcome.outcome !== 'lost';
  };
  const settled = await writeTransaction(db, dialect, async (trx) => {
    const written: boolean[][] = [];
    for (const plan of plans) {
      if (plan.head.record) await insertRecord(trx, plan.head.record);
      const followers = await claimFollowers(trx, plan, now);
      const run = [plan.head, ...followers];
      const settledRun: boolean[] = [];
      for (const [position, attempt] of run.entries()) {
        if (position > 0 && attempt.record) await insertRecord(trx, attempt.record);
        const last = position === run.length - 1;
        settledRun.push(await settle(trx, attempt, last ? deferred(plan.handOff) : undefined));
      }
      written.push([...settledRun, ...plan.followers.slice(followers.length).map(() => false)]);
    }
    return written;
  });
  for (const take of taken) take();
  return settled;
}

/**
 * Claims a request's followers for the worker that holds its job, when that claim holds and each
 * of them still waits as it was read; returns them as claimed, or none.
 */
async function claimFollowers(
  trx: Kysely<Database>,
  plan: PlannedSettlement,
  now: Date,
): Promise<PlannedAttempt[]> {
  if (plan.followers.length === 0) return [];
  const head = plan.head.job;
  // The head's claim, checked (and on PostgreSQL its row locked) by touching it under the claim.
  const held = await ownedBy(trx.updateTable('jobs'), head)
    .set({ updated_at: now.toISOString() })
    .executeTakeFirst();
  if (held.numUpdatedRows === 0n) return [];
  const ids = plan.followers.map((follower) => follower.job.id);
  const waiting = await trx
    .selectFrom('jobs')
    .select(['id', 'attempts'])
    .where('id', 'in', ids)
    .where('status', '=', 'queued')
    .where('run_at', 'is', null)
    .execute();
  const attemptsOf = new Map(waiting.map((row) => [row.id, Number(row.attempts)]));
  if (plan.followers.some((follower) => attemptsOf.get(follower.job.id) !== follower.job.attempts - 1))
    return [];
  await trx
    .updateTable('jobs')
    .set((eb) => ({
      status: 'running',
      locked_by: head.lockedBy,
      lease_until: head.leaseUntil.toISOString(),
      attempts: eb('attempts', '+', 1),
      updated_at: now.toISOString(),
    }))
    .where('id', 'in', ids)
    .execute();
  return plan.followers.map((follower) => ({
    ...follower,
    job: { ...follower.job, lockedBy: head.lockedBy, leaseUntil: head.leaseUntil },
  }));
}

function insertRecord(trx: Kysely<Database>, record: RecordedRow): Promise<unknown> {
  return trx.insertInto(record.into).values(record.values).execute();
}

/**
 * The settlements as the dialect's one statement (store/db/postgres/job-settlement.ts): for each
 * request, its job's update and record, its followers' (when its claim holds and every follower still
 * waits), and, when the run's last job finishes, the lane's count and its next job (made due, or
 * handed off). Returns, for each request's slot, which of its jobs were settled (its own first: false
 * when the claim was lost); a slot is absent when its lane changed under the statement.
 */
async function settleInOneStatement(
  db: Kysely<Database>,
  statement: NonNullable<JobSettlement['settleInOneStatement']>,
  plans: readonly PlannedSettlement[],
  now: Date,
): Promise<Map<number, boolean[]>> {
  const laneOf = (job: ClaimedJob) => (job.orderingSeq === null ? null : job.orderingKey);
  const rows = plans.flatMap((plan, slot) =>
    [plan.head, ...plan.followers].map((attempt, position): SettlementRow => ({
      slot,
      position,
      id: attempt.job.id,
      lockedBy: plan.head.job.lockedBy,
      attempts: attempt.job.attempts,
      status: statusAfter(attempt.next),
      runAt: attempt.next.outcome === 'retry' ? attempt.next.runAt.toISOString() : null,
      error: attempt.error,
      lane: laneOf(attempt.job),
      seq: attempt.job.orderingSeq,
      taker: plan.handOff?.workerId ?? null,
      leaseUntil: plan.handOff ? new Date(now.getTime() + plan.handOff.leaseMs).toISOString() : null,
      takeTypes: plan.handOff?.types ?? [],
      record: attempt.record,
    })),
  );
  // The lanes whose count changes: those with a job that finishes (done or dead).
  const lanes = plans
    .filter((plan) => [plan.head, ...plan.followers].some((attempt) => attempt.next.outcome !== 'retry'))
    .map((plan) => laneOf(plan.head.job))
    .filter((lane) => lane !== null);
  const settled = new Map<number, boolean[]>();
  for (const row of await statement(db, { at: now.toISOString(), rows, lanes })) {
    if (!row.ok) continue;
    const slot = Number(row.slot);
    const run = settled.get(slot) ?? [];
    run[Number(row.position)] = row.settled;
    settled.set(slot, run);
    const handOff = plans[slot]?.handOff;
    if (handOff && row.id !== null && row.status === 'running')
      handOff.take(claimedJob(row), Number(row.lane_last_seq));
  }
  return settled;
}

function statusAfter(next: SettleOutcome): 'queued' | 'done' | 'dead' {
  return next.outcome === 'retry' ? 'queued' : next.outcome === 'done' ? 'done' : 'dead';
}

/** What giving back a claim writes: the job is due again at once, unlocked, the attempt not counted. */
function givenBack(now: Date) {
  return (eb: ExpressionBuilder<Database, 'jobs'>) => ({
    status: 'queued' as const,
    run_at: now.toISOString(),
    locked_by: null,
    lease_until: null,
    attempts: eb('attempts', '-', 1),
    updated_at: now.toISOString(),
  });
}

/** Gives back a claim without counting it as an attempt: the job is due again at once. */
export async function releaseJob(db: Kysely<Database>, job: ClaimedJob, now: Date): Promise<boolean> {
  const result = await ownedBy(db.updateTable('jobs'), job).set(givenBack(now)).executeTakeFirst();
  if (result.numUpdatedRows === 0n) return false;
  await ringDoorbellWith(db);
  return true;
}

/**
 * Gives back every job `workerId` still holds (a stopping worker whose handlers did not finish within
 * the drain): each is due again at once for the other workers, as if never claimed, rather than after
 * its lease runs out. A handler still running settles nothing afterwards (its claim is gone). Returns
 * the ids given back.
 */
export async function releaseHeldJobs(db: Kysely<Database>, workerId: string, now: Date): Promise<string[]> {
  const released = await db
    .updateTable('jobs')
    .where('status', '=', 'running')
    .where('locked_by', '=', workerId)
    .set(givenBack(now))
    .returning('id')
    .execute();
  if (released.length > 0) await ringDoorbellWith(db);
  return released.map((row) => String(row.id));
}
