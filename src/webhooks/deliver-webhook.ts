import { randomUUID } from 'node:crypto';
import type { Deps } from '../core/deps.js';
import type { ClaimedJob } from '../jobs/queue.js';
import type { JobContext } from '../jobs/worker.js';
import { deliveryBody, type DeliveryPayload } from '../core/events/delivery-job.js';
import { postCallback, type DeliveryTransport } from './post-callback.js';
import { signBody, standardWebhookHeaders } from './signature.js';
import {
  signingSecrets,
  TARGET_COLUMNS,
  webhookTarget,
  type WebhookTarget,
  type WebhookTargets,
} from './webhook-targets.js';

/** What the request of one delivery is made of. */
interface DeliveryRequest extends WebhookTarget {
  event: string;
  body: string;
  /** When the event happened (its `timestamp`): the delivery's lag counts from it. */
  occurredAt: Date;
}

/**
 * Runs one attempt of one delivery (job `webhook.deliver`): POSTs `{documentId, event, actor,
 * timestamp}` to the callback URL, signed, and records the attempt together with its outcome (one
 * statement on PostgreSQL, one transaction on SQLite): done on any 2xx, otherwise a retry with
 * backoff until 24 hours after the event, then dead-lettered (Contract: webhook delivery). During a
 * secret rotation's grace period `webhook-signature` carries a signature per secret, the new one
 * first; `x-signery-signature`, a single value, is always the new secret's. Counts the attempt, and a
 * success's lag from the event, in the metrics.
 */
export async function deliverWebhook(
  deps: Deps,
  job: ClaimedJob,
  context: JobContext,
  options: { transport: DeliveryTransport; targets: WebhookTargets },
): Promise<void> {
  const payload = job.payload as Partial<DeliveryPayload>;
  const deliveryId = String(payload.deliveryId);
  const request = await loadRequest(deps, payload, options.targets);
  // The webhook was deleted since, or paused (no one entitled holds it, core/events/webhook-holders.ts): nothing
  // is sent, and the job completes.
  if (!request || request.paused) return;

  const attemptAt = deps.clock.now();
  const secrets = signingSecrets(request, attemptAt);
  const result = await postCallback(request.callbackUrl, options.transport, request.body, {
    'content-type': 'application/json',
    'user-agent': 'Signery-Webhooks/1',
    'x-signery-signature': signBody(request.hmacSecret, request.body),
    'x-signery-delivery': deliveryId,
    'x-signery-timestamp': attemptAt.toISOString(),
    'x-signery-event': request.event,
    ...standardWebhookHeaders(secrets, deliveryId, attemptAt, request.body),
  });

  if (result.success)
    deps.metrics.webhookAttempt(
      'success',
      (deps.clock.now().getTime() - request.occurredAt.getTime()) / 1000,
    );

  // Should the webhook be deleted during this attempt, the insert fails on its foreign key, nothing
  // is written, and the job — deleted with the webhook — is settled by nobody.
  const written = await context.settle({
    error: result.success ? null : (result.error ?? 'failed'),
    record: {
      into: 'webhook_attempts',
      values: {
        id: randomUUID(),
        delivery_id: deliveryId,
        attempt: job.attempts,
        attempted_at: attemptAt.toISOString(),
        status_code: result.statusCode,
        latency_ms: result.latencyMs,
        error: result.error,
        success: result.success ? 1 : 0,
        response_excerpt: result.responseExcerpt,
      },
    },
  });
  if (!result.success) deps.metrics.webhookAttempt(written.outcome === 'dead' ? 'dead' : 'failure');
}

/** The request from the payload and the webhook's (cached) target; from the event when not there. */
async function loadRequest(
  deps: Deps,
  payload: Partial<DeliveryPayload>,
  targets: WebhookTargets,
): Promise<DeliveryRequest | undefined> {
  if (payload.webhookId !== undefined && payload.body !== undefined && payload.event !== undefined) {
    const target = await targets.get(deps.db, payload.webhookId);
    return (
      target && { ...target, event: payload.event, body: payload.body, occurredAt: occurredAt(payload.body) }
    );
  }
  const row = await deps.db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .select([...TARGET_COLUMNS, 'e.document_id', 'e.event', 'e.actor', 'e.occurred_at'])
    .where('d.id', '=', String(payload.deliveryId))
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    ...webhookTarget(row),
    event: row.event,
    occurredAt: new Date(row.occurred_at),
    body: deliveryBody({
      documentId: row.document_id,
      event: row.event,
      actor: row.actor,
      timestamp: row.occurred_at,
    }),
  };
}

/** The event's time, from the body it is sent in (deliveryBody). */
function occurredAt(body: string): Date {
  return new Date(String((JSON.parse(body) as { timestamp?: unknown }).timestamp));
}
