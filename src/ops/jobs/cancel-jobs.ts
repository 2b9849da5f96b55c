import type { Kysely } from 'kysely';
import { cancelQueuedJob } from '../../jobs/queue-steering.js';
import type { SqlDialect } from '../../store/db/dialect.js';
import type { Database } from '../../store/db/schema.js';
import type { Progress } from '../progress.js';
import { changeJobs, type JobsChanged } from './change-jobs.js';
import type { JobSelection } from './job-selection.js';

export interface CancelJobsOptions {
  db: Kysely<Database>;
  dialect: SqlDialect;
  selection: JobSelection;
  now: Date;
  progress?: Progress | undefined;
}

/**
 * `signery jobs cancel`: takes the queued jobs of `selection` (ready, delayed or waiting in a lane)
 * off the queue. They become `dead`, their last error saying they were cancelled, and are purged
 * like other dead jobs (`signery jobs retry` brings one back). A running job is never cancelled:
 * it is left alone and said so (its worker finishes it; cancel a retry it leaves behind later).
 * A job of a lane leaves it, and the lane's next job moves up (queue-steering.ts, cancelQueuedJob).
 */
export async function cancelJobs(options: CancelJobsOptions): Promise<JobsChanged> {
  return changeJobs({
    ...options,
    label: 'jobs cancelled',
    refuse(job, named) {
      if (job.state === 'running')
        return 'a worker is running it: a running job is never cancelled (its worker finishes it)';
      if (job.state === 'dead' || job.state === 'done') return named ? `it is ${job.state} already` : null;
      return undefined;
    },
    change: (trx, job, now) => cancelQueuedJob(trx, job.id, now),
  });
}
