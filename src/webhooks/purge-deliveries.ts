import type { Deps } from '../core/deps.js';
import { writeTransaction } from '../store/db/dialect.js';

/** How long finished deliveries, their attempts and their events are kept. */
export const DELIVERY_RETENTION_MS = 30 * 86_400_000;
const BATCH = 500;
const MAX_BATCHES = 200;

/**
 * Deletes finished deliveries (delivered or failed) older than 30 days with their attempts and jobs,
 * then events of that age nothing refers to any more; in short transactions, so deliveries going on
 * meanwhile are not held up. Runs hourly on one node (webhook-jobs.ts). Returns how many went.
 */
export async function purgeDeliveries(deps: Deps, now: Date): Promise<number> {
  const before = new Date(now.getTime() - DELIVERY_RETENTION_MS).toISOString();
  let purged = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const count = await writeTransaction(deps.db, deps.dialect, async (trx) => {
      const old = await trx
        .selectFrom('webhook_deliveries as d')
        .innerJoin('jobs as j', 'j.id', 'd.job_id')
        .select(['d.id', 'd.job_id'])
        .where('d.created_at', '<', before)
        .where('j.status', 'in', ['done', 'dead'])
        .limit(BATCH)
        .execute();
      if (old.length === 0) return 0;
      const ids = old.map((o) => o.id);
      await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).execute();
      await trx.deleteFrom('webhook_deliveries').where('id', 'in', ids).execute();
      await trx
        .deleteFrom('jobs')
        .where(
          'id',
          'in',
          old.map((o) => o.job_id),
        )
        .execute();
      return old.length;
    });
    purged += count;
    if (count < BATCH) break;
  }
  await deps.db
    .deleteFrom('events')
    .where('occurred_at', '<', before)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb.selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'events.id'),
        ),
      ),
    )
    .execute();
  return purged;
}
