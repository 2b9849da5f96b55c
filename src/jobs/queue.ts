import { randomUUID } from 'node:crypto';
import {
  sql,
  type Insertable,
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
 * asks for it commits (DESIGN: events go into the same transaction).
 *
 * ```ts
 * await db.transaction().execute(async (trx) => {
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

// A PostgreSQL settlement that met a lane changed under it is run again this often, then in a
// transaction.
const SETTLE_TRIES = 3;

/**
 * Settles a claimed job, done or failed (see completeJob and failJob), and writes `record` with it:
 * on PostgreSQL in one statement, which is atomic by itself and costs one round trip instead of a
 * transaction's six; on SQLite in one write transaction.
 *
 * ```ts
 * await settleJob(db, dialect, job, { error: null, record: { into: 'webhook_attempts', values } }, now);
 * ```
 */
export async function settleJob(
  db: Kysely<Database>,
  dialect: SqlDialect,
  job: ClaimedJob,
  settlement: Settlement,
  now: Date,
  options: { random?: () => number; handOff?: HandOff | undefined } = {},
): Promise<SettleOutcome> {
  const error = settlement.error?.slice(0, 1000) ?? null;
  const next: SettleOutcome = error === null ? { outcome: 'done' } : afterFailure(job, now, options);
  if (dialect.name === 'postgres') {
    for (let tries = 0; tries < SETTLE_TRIES; tries++) {
      const settled = await settleInOneStatement(
        db,
        job,
        next,
        error,
        settlement.record,
        now,
        options.handOff,
      );
      if (settled === 'lane changed') continue;
      return settled ? next : { outcome: 'lost' };
    }
  }
  return writeTransaction(db, dialect, async (trx) => {
    if (settlement.record) await insertRecord(trx, settlement.record);
    if (error === null) {
      return (await completeJob(trx, job, now, options.handOff)) ? next : { outcome: 'lost' };
    }
    return failJob(trx, job, error, now, { ...options, retry: next.outcome === 'retry' });
  });
}

function insertRecord(trx: Kysely<Database>, record: RecordedRow): Promise<unknown> {
  return trx.insertInto(record.into).values(record.values).execute();
}

/**
 * The settlement as one PostgreSQL statement: the job's update, the record, and for a lane's head
 * that finishes, the lane's count and its next job (made due, or handed off) — what `finish` does
 * in three statements. A statement reads one snapshot, taken before it waits for the lane's lock:
 * had an enqueue to this lane committed in between, its job would be invisible here and left
 * waiting for good. So the lane's `last_seq` as of the snapshot is compared with the one locked
 * (the latest), and when they differ nothing is written and 'lane changed' is returned: the caller
 * runs it again, with a snapshot that sees that job. Lock order as in `finish`: lane, then jobs.
 */
async function settleInOneStatement(
  db: Kysely<Database>,
  job: ClaimedJob,
  next: SettleOutcome,
  error: string | null,
  record: RecordedRow | undefined,
  now: Date,
  handOff: HandOff | undefined,
): Promise<boolean | 'lane changed'> {
  const at = now.toISOString();
  const lane = job.orderingKey !== null && job.orderingSeq !== null ? job.orderingKey : undefined;
  const finishing = next.outcome !== 'retry';
  const jobSet =
    next.outcome === 'retry'
      ? sql`status = 'queued', run_at = ${next.runAt.toISOString()}, locked_by = null, lease_until = null, last_error = ${error}, updated_at = ${at}`
      : sql`status = ${next.outcome === 'done' ? 'done' : 'dead'}, run_at = null, lease_until = null, last_error = ${error}, updated_at = ${at}`;
  const owned = sql`id = ${job.id} and status = 'running' and locked_by = ${job.lockedBy} and attempts = ${job.attempts}`;
  const laneSteps =
    finishing && lane !== undefined
      ? sql`seen as materialized (select last_seq from job_lanes where key = ${lane}),
          locked as materialized (select last_seq from job_lanes where key = ${lane} for update),
          ok as materialized (
            select (select last_seq from seen) is not distinct from (select last_seq from locked) as ok
          ),`
      : sql`ok as materialized (select true as ok),`;
  const take = sql`(${handOff !== undefined}::boolean and type = any(${handOff ? [...handOff.types] : []}::text[]))`;
  const nextSteps =
    finishing && lane !== undefined
      ? sql`, lane as (
            update job_lanes set active = active - 1, updated_at = ${at}
            where key = ${lane} and exists (select from job)
            returning active
          ),
          next as (
            update jobs set
              status = case when ${take} then 'running' else status end,
              run_at = ${at},
              locked_by = case when ${take} then ${handOff?.workerId ?? null} else locked_by end,
              lease_until = case when ${take} then ${handOff ? new Date(now.getTime() + handOff.leaseMs).toISOString() : null} else lease_until end,
              attempts = case when ${take} then attempts + 1 else attempts end,
              updated_at = ${at}
            where id = (
                select id from jobs where ordering_key = ${lane} and ordering_seq > ${job.orderingSeq}
                order by ordering_seq limit 1
              )
              and status = 'queued' and run_at is null and (select active from lane) > 0
            returning *
          )`
      : sql`, next as (select * from jobs where false)`;
  // A next job made due rather than taken wakes the workers of every node, as an enqueue does.
  const wake = sql`, woken as (select ${NOTIFY_WORKERS} from next where status = 'queued')`;
  const recordStep = record
    ? sql`, record as (
          insert into ${sql.table(record.into)} (${sql.join(Object.keys(record.values).map((c) => sql.ref(c)))})
          select ${sql.join(Object.values(record.values))} where (select ok from ok)
        )`
    : sql``;
  const result = await sql<Selectable<JobTable> & { ok: boolean; settled: boolean }>`
    with ${laneSteps}
    job as (update jobs set ${jobSet} where ${owned} and (select ok from ok) returning id)
    ${nextSteps}
    ${wake}
    ${recordStep}
    select ok.ok, exists (select from job) as settled, (select count(*) from woken) as woken, next.*
    from ok left join next on true`.execute(db);
  const row = result.rows[0];
  if (!row?.ok) return 'lane changed';
  if (!row.settled) return false;
  if (handOff && row.id !== null && row.status === 'running') handOff.take(claimedJob(row));
  return true;
}

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
