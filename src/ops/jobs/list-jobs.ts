import type { Kysely } from 'kysely';
import type { Database } from '../../store/db/schema.js';
import { jobView, selectJobs, VIEW_COLUMNS, type JobSelection, type JobView } from './job-selection.js';

export interface ListJobsOptions {
  db: Kysely<Database>;
  selection: JobSelection;
  now: Date;
  /** The most jobs listed; `total` still counts them all. */
  limit: number;
}

/**
 * `signery jobs list`: the jobs of `selection`, oldest first (by when they were enqueued), at most
 * `limit` of them, and how many match in all.
 *
 * ```ts
 * const { total, jobs } = await listJobs({ db, selection: { ids: [], types: ['webhook.deliver'], states: ['dead'] }, now, limit: 100 });
 * ```
 */
export async function listJobs(options: ListJobsOptions): Promise<{ total: number; jobs: JobView[] }> {
  const { db, selection, now } = options;
  const count = await selectJobs(db, selection, now)
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
    .executeTakeFirstOrThrow();
  const rows = await selectJobs(db, selection, now)
    .select([...VIEW_COLUMNS])
    .orderBy('created_at')
    .orderBy('id')
    .limit(options.limit)
    .execute();
  return { total: Number(count.n), jobs: rows.map((row) => jobView(row, now)) };
}
