import { EVENT_NAMES } from '../core/events/emit-event.js';
import type { Static } from 'typebox';
import type { ReplayBody } from './contract.js';
import { randomUUID } from 'node:crypto';
import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { LimitExceeded, ValidationError } from '../base/errors.js';
import { writeTransaction } from '../store/db/dialect.js';
import { deliveryBody, enqueueDelivery, requeueDelivery } from '../core/events/delivery-job.js';
import { DELIVERY_RETENTION_MS } from './purge-deliveries.js';
import { loadVisibleWebhook } from './webhook-access.js';

/** The widest range a replay covers: events are kept no longer (purge-deliveries.ts), and a day. */
export const MAX_REPLAY_RANGE_MS = DELIVERY_RETENTION_MS + 86_400_000;
/** The most events one replay sends again: a receiver catching up, not a bulk export. */
export const MAX_REPLAY_EVENTS = 1000;

/** The body of POST /webhooks/:webhookId/replay: events at or after `from`, before `to` (ISO 8601). */
export type ReplayRange = Static<typeof ReplayBody>;

/**
 * POST /webhooks/:webhookId/replay (issue 27, item 3): sends again every event of `[from, to)` in
 * the webhook's scope, in the order they happened, queued behind the deliveries already waiting in
 * the webhook's lane (so they too go out one at a time, after what was owed before).
 * - An event that already had a delivery to this webhook is sent again as that delivery (the same
 *   `webhook-id` / `x-signery-delivery`, a new attempt series of 24 hours, like a retry): a
 *   receiver that already has it recognizes it and ignores it. One still on its way (pending,
 *   waiting, being delivered or retrying) is not queued twice and is not counted.
 * - An event of the webhook's scope that has no delivery to it (its delivery was purged, or the
 *   webhook was being created as it happened) gets a new delivery, listed like any other.
 * - Events from before the webhook existed are not sent: a replay gives a receiver again what the
 *   webhook owed it, it does not backfill history the webhook never covered (a `from` before the
 *   webhook's creation counts from its creation).
 * At most MAX_REPLAY_RANGE_MS between `from` and `to` (400) and MAX_REPLAY_EVENTS events (413, to
 * be split into smaller ranges). Answers how many deliveries were queued; audited.
 */
export async function replayDeliveries(
  deps: Deps,
  actor: Actor,
  webhookId: string,
  range: ReplayRange,
): Promise<{ replayed: number }> {
  const webhook = await loadVisibleWebhook(deps, actor, webhookId);
  const from = instant('from', range.from);
  const to = instant('to', range.to);
  if (to.getTime() <= from.getTime()) throw new ValidationError('to', 'must be later than "from"');
  if (to.getTime() - from.getTime() > MAX_REPLAY_RANGE_MS)
    throw new ValidationError('to', `must be at most ${MAX_REPLAY_RANGE_MS / 86_400_000} days after "from"`);
  const since = new Date(Math.max(from.getTime(), Date.parse(webhook.created_at)));
  const now = deps.clock.now();

  return writeTransaction(deps.db, deps.dialect, async (trx) => {
    let query = trx
      .selectFrom('events as e')
      .leftJoin('webhook_deliveries as d', (join) =>
        join.onRef('d.event_id', '=', 'e.id').on('d.webhook_id', '=', webhook.id),
      )
      .leftJoin('jobs as j', 'j.id', 'd.job_id')
      .select([
        'e.id as event_id',
        'e.document_id',
        'e.event',
        'e.actor',
        'e.occurred_at',
        'd.id as delivery_id',
        'd.seq',
        'j.status as job_status',
      ])
      .where('e.tenant_id', '=', webhook.tenant_id)
      // Feed-only events (core/events/feed-event.ts) were never a webhook's to deliver.
      .where('e.event', 'in', [...EVENT_NAMES])
      .where('e.occurred_at', '>=', since.toISOString())
      .where('e.occurred_at', '<', to.toISOString());
    if (webhook.type === 'organization')
      query = query.where('e.organization_id', '=', webhook.organization_id ?? '');
    const events = await query.limit(MAX_REPLAY_EVENTS + 1).execute();
    if (events.length > MAX_REPLAY_EVENTS)
      throw new LimitExceeded(
        `More than ${MAX_REPLAY_EVENTS} events in this range: replay it in smaller ranges`,
      );
    // In the order they happened; events of the same instant in their lane order (commit order).
    events.sort(
      (a, b) =>
        Date.parse(a.occurred_at) - Date.parse(b.occurred_at) ||
        Number(a.seq ?? Infinity) - Number(b.seq ?? Infinity) ||
        (a.event_id < b.event_id ? -1 : 1),
    );

    let replayed = 0;
    for (const event of events) {
      if (event.delivery_id !== null) {
        if (event.job_status === 'queued' || event.job_status === 'running') continue;
        await requeueDelivery(trx, {
          webhookId: webhook.id,
          deliveryId: event.delivery_id,
          now,
          requestId: actor.requestId,
        });
      } else {
        const deliveryId = randomUUID();
        const job = await enqueueDelivery(trx, {
          webhookId: webhook.id,
          deliveryId,
          event: event.event,
          body: deliveryBody({
            documentId: event.document_id,
            event: event.event,
            actor: event.actor,
            timestamp: event.occurred_at,
          }),
          now,
          requestId: actor.requestId,
        });
        await trx
          .insertInto('webhook_deliveries')
          .values({
            id: deliveryId,
            webhook_id: webhook.id,
            event_id: event.event_id,
            seq: job.orderingSeq ?? 0,
            job_id: job.id,
            created_at: now.toISOString(),
          })
          .execute();
      }
      replayed++;
    }
    await recordAction(trx, actor, {
      activityType: 'webhookReplayed',
      objectType: 'webhook',
      objectId: webhook.id,
      data: { from: from.toISOString(), to: to.toISOString(), replayed },
      at: now,
    });
    return { replayed };
  });
}

/** A date-time of the request, or a 400 naming the field. */
function instant(field: string, value: string): Date {
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw new ValidationError(field, 'must be a date-time (ISO 8601)');
  return new Date(time);
}
