import type { Kysely } from 'kysely';
import { runNow } from '../../jobs/queue.js';
import { requeueDeadJob } from '../../jobs/queue-steering.js';
import type { SqlDialect } from '../../store/db/dialect.js';
import type { Database } from '../../store/db/schema.js';
import type { Progress } from '../progress.js';
import { changeJobs, type JobsChanged } from './change-jobs.js';
import type { JobSelection } from './job-selection.js';

export interface RetryJobsOptions {
  db: Kysely<Database>;
  dialect: SqlDialect;
  selection: JobSelection;
  now: Date;
  progress?: Progress | undefined;
}

/**
 * `signery jobs retry`: runs the failed jobs of `selection` again, now.
 * - dead (failed for good, or cancelled): queued again as a new series of attempts, due now, or
 *   behind the jobs already waiting in its lane (queue-steering.ts, requeueDeadJob);
 * - delayed after a failed attempt (waiting for its next retry): due now;
 * - any other (ready, waiting its turn in a lane, running, done, or delayed for a first run that is
 *   later on purpose): passed over, and said so when it was named by its id.
 * Workers are woken (on PostgreSQL on every node; on SQLite they find the jobs at their next poll).
 */
export async function retryJobs(options: RetryJobsOptions): Promise<JobsChanged> {
  return changeJobs({
    ...options,
    label: 'jobs retried',
    refuse(job, named) {
      if (job.state === 'dead') return undefined;
      if (job.state === 'delayed' && job.lastError !== null) return undefined;
      // Selected by type, state or age: only its failed jobs are meant.
      if (!named) return null;
      if (job.state === 'delayed') return 'it has not failed: its first run is later on purpose';
      if (job.state === 'ready') return 'it is due already';
      if (job.state === 'waiting') return 'it waits for the job before it in its lane';
      if (job.state === 'running') return 'a worker is running it';
      return 'it is done';
    },
    change: (trx, job, now) =>
      job.state === 'dead' ? requeueDeadJob(trx, job.id, now) : runNow(trx, job.id, now),
  });
}
