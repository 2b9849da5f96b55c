import type { Kysely } from 'kysely';
import type { Database } from '../store/db/schema.js';
import { enqueue } from './queue.js';

/**
 * Recurring jobs. Time is cut into ticks of `intervalMs` (aligned to the epoch, so every node
 * computes the same ticks); each tick becomes one job whose id names the schedule and the tick.
 * Every node enqueues the ticks it sees, and the fixed id makes all but the first enqueue a no-op,
 * so each tick runs once in the whole cluster, with the queue's lease and retries. Ticks missed
 * while no node was running are not caught up: the next tick runs.
 */
export interface Schedule {
  name: string;
  intervalMs: number;
}

export function scheduleJobType(name: string): string {
  return `schedule:${name}`;
}

/** The start of the tick that `now` falls in. */
export function currentTick(schedule: Schedule, now: Date): Date {
  return new Date(Math.floor(now.getTime() / schedule.intervalMs) * schedule.intervalMs);
}

/**
 * Enqueues the job of one tick; a tick already enqueued (by this or another node) is left alone.
 * Finished ticks older than a day (or ten intervals) are deleted on the way, so they do not pile up.
 */
export async function enqueueTick(
  db: Kysely<Database>,
  schedule: Schedule,
  tick: Date,
  now: Date,
): Promise<void> {
  const type = scheduleJobType(schedule.name);
  await enqueue(db, {
    type,
    id: `${type}:${tick.toISOString()}`,
    payload: { tick: tick.toISOString() },
    now,
    runAt: tick,
    // A tick that cannot finish before the next one starts is superseded by it.
    deadline: new Date(tick.getTime() + schedule.intervalMs),
    maxAttempts: 3,
  });
  const keep = Math.max(86_400_000, 10 * schedule.intervalMs);
  await db
    .deleteFrom('jobs')
    .where('type', '=', type)
    .where('status', 'in', ['done', 'dead'])
    .where('updated_at', '<', new Date(now.getTime() - keep).toISOString())
    .execute();
}
