import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { loadVisibleWebhook } from './webhook-access.js';

/** One HTTP attempt of a delivery (Contract: "every attempt recorded"). */
export interface AttemptView {
  attempt: number;
  time: string;
  /** null when no answer came (refused by the SSRF guard, connection error, time-out). */
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  success: boolean;
  /**
   * The first 256 bytes of the receiver's answer as text (invalid UTF-8 replaced by U+FFFD); null
   * without an answer, or for attempts made before excerpts were kept.
   */
  responseExcerpt: string | null;
}

/**
 * - `pending`: due, not tried yet; `waiting`: behind an earlier delivery to the same webhook;
 * - `delivering`: an attempt is under way; `retrying`: failed, next attempt at `nextAttemptAt`;
 * - `delivered`: a 2xx came back; `failed`: given up after 24 hours (dead-lettered).
 */
export type DeliveryStatus = 'pending' | 'waiting' | 'delivering' | 'retrying' | 'delivered' | 'failed';

export interface DeliveryView {
  /** The `x-signery-delivery` header of its every attempt. */
  id: string;
  event: string;
  documentId: string;
  actor: string;
  /** The event's time, the `timestamp` of the payload. */
  timestamp: string;
  createDate: string;
  status: DeliveryStatus;
  nextAttemptAt: string | null;
  attempts: AttemptView[];
}

export interface DeliveryPage {
  from?: number | undefined;
  size?: number | undefined;
}

/** GET /webhooks/:webhookId/deliveries: the latest events first, each with all its attempts. */
export async function listDeliveries(
  deps: Deps,
  actor: Actor,
  webhookId: string,
  page: DeliveryPage = {},
): Promise<{ total: number; from: number; results: DeliveryView[] }> {
  const webhook = await loadVisibleWebhook(deps, actor, webhookId);
  const from = page.from ?? 0;
  const base = deps.db.selectFrom('webhook_deliveries as d').where('d.webhook_id', '=', webhook.id);
  const [count, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    base
      .innerJoin('events as e', 'e.id', 'd.event_id')
      .leftJoin('jobs as j', 'j.id', 'd.job_id')
      .select([
        'd.id',
        'd.created_at',
        'e.event',
        'e.document_id',
        'e.actor',
        'e.occurred_at',
        'j.status as job_status',
        'j.run_at',
        'j.attempts',
      ])
      .orderBy('d.seq', 'desc')
      .limit(page.size ?? 50)
      .offset(from)
      .execute(),
  ]);
  const attempts =
    rows.length === 0
      ? []
      : await deps.db
          .selectFrom('webhook_attempts')
          .selectAll()
          .where(
            'delivery_id',
            'in',
            rows.map((r) => r.id),
          )
          .orderBy('attempted_at')
          .orderBy('attempt')
          .execute();
  const byDelivery = new Map<string, AttemptView[]>();
  for (const a of attempts) {
    const list = byDelivery.get(a.delivery_id) ?? [];
    list.push({
      attempt: Number(a.attempt),
      time: a.attempted_at,
      statusCode: a.status_code === null ? null : Number(a.status_code),
      latencyMs: Number(a.latency_ms),
      error: a.error,
      success: Boolean(a.success),
      responseExcerpt: a.response_excerpt,
    });
    byDelivery.set(a.delivery_id, list);
  }
  return {
    total: Number(count.n),
    from,
    results: rows.map((r) => {
      const status = deliveryStatus(r.job_status, r.run_at, Number(r.attempts ?? 0));
      return {
        id: r.id,
        event: r.event,
        documentId: r.document_id,
        actor: r.actor,
        timestamp: r.occurred_at,
        createDate: r.created_at,
        status,
        nextAttemptAt: status === 'retrying' || status === 'pending' ? r.run_at : null,
        attempts: byDelivery.get(r.id) ?? [],
      };
    }),
  };
}

function deliveryStatus(jobStatus: string | null, runAt: string | null, attempts: number): DeliveryStatus {
  switch (jobStatus) {
    case 'done':
      return 'delivered';
    case 'dead':
    case null:
      return 'failed';
    case 'running':
      return 'delivering';
    default:
      if (runAt === null) return 'waiting';
      return attempts > 0 ? 'retrying' : 'pending';
  }
}
