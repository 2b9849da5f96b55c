import type { Kysely } from 'kysely';
import type { Database } from '../store/db/schema.js';

/**
 * Where an unfinished job stands: `ready` (due, waiting for a worker), `delayed` (its first run or
 * next retry is later), `waiting` (behind an earlier job of its lane, see queue.ts) or `running`.
 */
export const JOB_STATES = ['ready', 'delayed', 'waiting', 'running'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** The unfinished jobs of one type. */
export interface QueueTypeStats {
  type: string;
  jobs: Record<JobState, number>;
  /** How long the longest-waiting ready job has been due, in seconds at `now`; 0 when none is ready. */
  oldestReadySeconds: number;
  /** Unfinished jobs whose last attempt failed (retried later, or retrying now). */
  failing: number;
  /**
   * Jobs that failed for good (or were cancelled) and are kept until purged: what
   * `signery jobs retry` can run again.
   */
  dead: number;
}

/**
 * The queue's unfinished jobs counted by type and state, and its dead jobs by type, in one grouped
 * query (for GET /metrics). It reads only `queued`, `running` and `dead` rows, through the index that
 * claims use (`jobs_due`, whose first column is the status), so its cost grows with the backlog and
 * the dead jobs kept (purged with their deliveries, or with their schedule), not with the done jobs
 * kept for the deliveries list.
 *
 * ```ts
 * const stats = await readQueueStats(db, clock.now());
 * ```
 */
export async function readQueueStats(db: Kysely<Database>, now: Date): Promise<QueueTypeStats[]> {
  const at = now.toISOString();
  const rows = await db
    .selectFrom('jobs')
    .select((eb) => [
      'type',
      eb
        .case()
        .when('status', '=', 'dead')
        .then('dead')
        .when('status', '=', 'running')
        .then('running')
        .when('run_at', 'is', null)
        .then('waiting')
        .when('run_at', '<=', at)
        .then('ready')
        .else('delayed')
        .end()
        .as('state'),
      eb.fn.countAll<number | string | bigint>().as('jobs'),
      eb.fn.min('run_at').as('oldest'),
      eb.fn.count<number | string | bigint>('last_error').as('failing'),
    ])
    .where('status', 'in', ['queued', 'running', 'dead'])
    .groupBy(['type', 'state'])
    .execute();
  const byType = new Map<string, QueueTypeStats>();
  for (const row of rows) {
    const stats = byType.get(row.type) ?? {
      type: row.type,
      jobs: { ready: 0, delayed: 0, waiting: 0, running: 0 },
      oldestReadySeconds: 0,
      failing: 0,
      dead: 0,
    };
    byType.set(row.type, stats);
    if (row.state === 'dead') {
      stats.dead = Number(row.jobs);
      continue;
    }
    const state = row.state as JobState;
    stats.jobs[state] = Number(row.jobs);
    stats.failing += Number(row.failing);
    if (state === 'ready' && row.oldest !== null)
      stats.oldestReadySeconds = Math.max(0, (now.getTime() - new Date(row.oldest).getTime()) / 1000);
  }
  return [...byType.values()];
}
