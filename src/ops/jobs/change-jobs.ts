import type { Kysely } from 'kysely';
import { writeTransaction, type SqlDialect } from '../../store/db/dialect.js';
import type { Database } from '../../store/db/schema.js';
import type { Progress } from '../progress.js';
import { jobState, selectJobs, type JobSelection, type ListedState } from './job-selection.js';

/** What `signery jobs retry|cancel` did. */
export interface JobsChanged {
  /** The jobs changed, with the state each was in. */
  changed: { id: string; from: ListedState }[];
  /** Jobs of the selection it did not change, with the state each was in and why. */
  leftAlone: { id: string; state: ListedState; reason: string }[];
  /** Ids named that name no job. */
  unknown: string[];
}

/** A job as read for a change. */
export interface Candidate {
  id: string;
  state: ListedState;
  lastError: string | null;
  lane: string | null;
}

export interface ChangeJobsOptions {
  db: Kysely<Database>;
  dialect: SqlDialect;
  selection: JobSelection;
  now: Date;
  progress?: Progress | undefined;
  /** The progress line's label ("jobs retried"). */
  label: string;
  /**
   * Why a job of the selection is left alone (reported), or undefined when `change` is for it.
   * `named`: the job was named by its id. Null: not a job the command is about (passed over unsaid).
   */
  refuse(job: Candidate, named: boolean): string | null | undefined;
  /** Changes one job in `trx`: false when it was no longer in a state to change (a worker took it). */
  change(trx: Kysely<Database>, job: Candidate, now: Date): Promise<boolean>;
}

// Jobs changed per transaction: short transactions, so workers settling jobs are not held up.
const BATCH = 200;

/**
 * Reads the selection, then changes its jobs in short write transactions. A transaction holds the
 * jobs of one lane only (or of none), in their lane order: it then locks at most one lane's row,
 * so it never waits on a worker settling several lanes while that worker waits on it.
 */
export async function changeJobs(options: ChangeJobsOptions): Promise<JobsChanged> {
  const { db, dialect, selection, now } = options;
  const rows = await selectJobs(db, selection, now)
    .select(['id', 'status', 'run_at', 'last_error', 'ordering_key', 'ordering_seq', 'created_at'])
    .execute();
  const found = new Set(rows.map((row) => row.id));
  const result: JobsChanged = {
    changed: [],
    leftAlone: [],
    unknown: selection.ids.filter((id) => !found.has(id)),
  };
  const byLane = new Map<string | null, (Candidate & { order: number })[]>();
  for (const row of rows) {
    const job = { id: row.id, state: jobState(row, now), lastError: row.last_error, lane: row.ordering_key };
    const reason = options.refuse(job, selection.ids.includes(job.id));
    if (reason === null) continue;
    if (reason !== undefined) {
      result.leftAlone.push({ id: job.id, state: job.state, reason });
      continue;
    }
    const order = row.ordering_seq === null ? new Date(row.created_at).getTime() : Number(row.ordering_seq);
    byLane.set(job.lane, [...(byLane.get(job.lane) ?? []), { ...job, order }]);
  }
  const total = [...byLane.values()].reduce((sum, jobs) => sum + jobs.length, 0);
  const counter = total > 0 ? options.progress?.counter(options.label, total) : undefined;
  for (const jobs of byLane.values()) {
    jobs.sort((a, b) => a.order - b.order);
    for (let start = 0; start < jobs.length; start += BATCH) {
      const batch = jobs.slice(start, start + BATCH);
      const outcomes = await writeTransaction(db, dialect, async (trx) => {
        const changed: boolean[] = [];
        for (const job of batch) changed.push(await options.change(trx, job, now));
        return changed;
      });
      batch.forEach((job, index) => {
        if (outcomes[index]) result.changed.push({ id: job.id, from: job.state });
        else
          result.leftAlone.push({
            id: job.id,
            state: job.state,
            reason: 'it changed meanwhile (a worker took it)',
          });
      });
      counter?.add(batch.length);
    }
  }
  counter?.done();
  return result;
}
