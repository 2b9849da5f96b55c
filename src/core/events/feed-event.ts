import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../store/db/schema.js';

/**
 * Events that GET /events lists but no webhook receives: what an AI agent proposed waits for a
 * person, and is decided (issue 42). They are not in EVENT_NAMES: a pending action must send nothing
 * anywhere until a person approves it, and a webhook replay skips them too.
 */
export const FEED_ONLY_EVENT_NAMES = [
  'agentActionPending',
  'agentActionApproved',
  'agentActionRejected',
  // An approved act whose node died before it finished (agents/settle-interrupted-actions.ts).
  'agentActionInterrupted',
] as const;
export type FeedOnlyEventName = (typeof FEED_ONLY_EVENT_NAMES)[number];

export interface FeedOnlyEvent {
  tenantId: string;
  organizationId: string;
  documentId: string;
  event: FeedOnlyEventName;
  /** The login name of who acted. */
  actor: string;
  at: Date;
}

/**
 * Records a feed-only event in the transaction of the change it reports. The feed's order columns
 * (PostgreSQL's transaction id and sequence) take their defaults, as for every event.
 */
export async function recordFeedEvent(trx: Kysely<Database>, event: FeedOnlyEvent): Promise<void> {
  await trx
    .insertInto('events')
    .values({
      id: randomUUID(),
      tenant_id: event.tenantId,
      organization_id: event.organizationId,
      document_id: event.documentId,
      event: event.event,
      actor: event.actor,
      occurred_at: event.at.toISOString(),
    })
    .execute();
}
