import type { Actor } from '../core/access/actor.js';
import { isTenantWide } from '../core/access/roles.js';
import type { Deps } from '../core/deps.js';
import type { FeedEvent } from '../store/db/event-feed.js';
import { assertMayUseWebhooks } from './webhook-access.js';

/** Events one page lists at most, and by default. */
export const MAX_FEED_PAGE = 1000;
export const DEFAULT_FEED_PAGE = 100;

/** An event as GET /events lists it: what a webhook delivery's body says, with the event's id. */
export interface FeedEntry {
  id: string;
  event: string;
  documentId: string;
  actor: string;
  timestamp: string;
}

/**
 * GET /events?after=<cursor> (issue 27, item 4): for integrators who cannot receive webhooks, the
 * events webhooks would deliver, in order, after a keyset cursor: ask again with the answer's
 * `cursor` and every event comes exactly once, from whichever node answers (store/db/event-feed.ts).
 * Who sees what follows the webhooks (webhook-access.ts): the right `use_webhooks`; global and super
 * administrators the whole tenant's events, everyone else their organization's. Events are kept as
 * long as webhook deliveries (30 days): a poller away longer resumes at the oldest kept.
 */
export async function listEvents(
  deps: Deps,
  actor: Actor,
  options: { after?: string | undefined; limit?: number | undefined },
): Promise<{ events: FeedEntry[]; cursor: string | null; more: boolean }> {
  assertMayUseWebhooks(actor);
  const limit = options.limit ?? DEFAULT_FEED_PAGE;
  // One more than asked tells whether a next page is already there.
  const read = await deps.dialect.eventFeed.read(deps.db, {
    tenantId: actor.tenantId,
    ...(isTenantWide(actor.role) ? {} : { organizationId: actor.organizationId }),
    after: options.after,
    limit: limit + 1,
  });
  const listed = read.slice(0, limit);
  // Nothing new yet: ask again from the same place.
  const cursor = listed.at(-1)?.cursor ?? options.after ?? null;
  const more = read.length > limit;
  return { events: listed.map(entry), cursor, more };
}

function entry(event: FeedEvent): FeedEntry {
  return {
    id: event.id,
    event: event.event,
    documentId: event.documentId,
    actor: event.actor,
    timestamp: event.occurredAt,
  };
}
