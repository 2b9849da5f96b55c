import { randomUUID } from 'node:crypto';
import { type Kysely } from 'kysely';
import { ringDoorbellWith } from '../../jobs/doorbell.js';
import { dialectOf } from '../../store/db/dialect.js';
import type { Database } from '../../store/db/schema.js';
import { DELIVERY_JOB_TYPE, DELIVERY_WINDOW_MS, deliveryBody, webhookLane } from './delivery-job.js';

/** Webhook `event` values (Contract: Sharing and external recipients, Events). */
export const EVENT_NAMES = [
  'documentCreated',
  'documentEdited',
  'documentDeleted',
  'signRequest',
  'signDelegated',
  'signRejected',
  'signExpired',
  'signCancelled',
  'documentSigned',
  'documentCompleted',
  'documentSimpleActionExecuted',
] as const;
export type EventName = (typeof EVENT_NAMES)[number];

export interface DocumentEvent {
  tenantId: string;
  /** The document's organization: its organization webhooks and the tenant's webhooks receive it. */
  organizationId: string;
  documentId: string;
  event: EventName;
  /** The login name of the user who performed the action (spec: Events, `actor`). */
  actor: string;
  /** When the change happened (the change's clock); sent as `timestamp`. */
  at: Date;
  /** The request that made the change: its deliveries' jobs carry it (EnqueueOptions.requestId). */
  requestId?: string | undefined;
}

/**
 * Records an event and queues its delivery to every webhook whose scope covers it: the tenant's
 * tenant webhooks and the webhooks of the document's organization (spec: Webhooks, "a webhook
 * covers all events in its scope"). Call it inside the transaction of the change that causes the
 * event, so both commit or neither does (the outbox: no event is lost to a crash after commit, and
 * none is sent for a change that rolled back). It locks each covering webhook's lane (the lock that
 * keeps its deliveries in commit order) until the commit: on SQLite make it the transaction's last
 * step; on PostgreSQL, in a transaction of `writeTransaction`, its statement goes with the COMMIT
 * wherever it is called (`beforeCommit`). There the workers are woken once it has committed.
 *
 * ```ts
 * await writeTransaction(deps.db, deps.dialect, async (trx) => {
 *   await trx.insertInto('documents').values(row).execute();
 *   await emitEvent(trx, { tenantId, organizationId, documentId, event: 'documentCreated', actor: actor.name, at: now });
 * });
 * ```
 */
export async function emitEvent(trx: Kysely<Database>, event: DocumentEvent): Promise<{ eventId: string }> {
  const eventId = randomUUID();
  const at = event.at.toISOString();
  await dialectOf(trx).outbox.write(
    trx,
    {
      eventId,
      event,
      at,
      jobType: DELIVERY_JOB_TYPE,
      lanePrefix: webhookLane(''),
      body: deliveryBody({ ...event, timestamp: at }),
      deadline: new Date(event.at.getTime() + DELIVERY_WINDOW_MS).toISOString(),
      requestId: event.requestId,
    },
    () => ringDoorbellWith(trx),
  );
  return { eventId };
}
