import type { Kysely } from 'kysely';
import type { Database } from '../store/db/schema.js';

/** Where a webhook's requests go and how they are signed. */
export interface WebhookTarget {
  callbackUrl: string;
  hmacSecret: string;
}

// Far more webhooks than a node delivers to at once; past it the cache starts over.
const MAX_CACHED = 10_000;

/**
 * The URL and secret of webhooks, read once per worker rather than at every attempt. Safe because
 * a webhook never changes (spec: Webhooks, "no update: delete and recreate"), and a deleted one
 * takes its delivery jobs with it in the same transaction (deleteWebhook): a job a worker holds
 * belongs to a webhook that existed when it was claimed — as sure as a read before the request was.
 *
 * ```ts
 * const targets = new WebhookTargets();
 * const target = await targets.get(db, webhookId); // undefined: deleted
 * ```
 */
export class WebhookTargets {
  readonly #cache = new Map<string, WebhookTarget>();

  async get(db: Kysely<Database>, webhookId: string): Promise<WebhookTarget | undefined> {
    const cached = this.#cache.get(webhookId);
    if (cached) return cached;
    const row = await db
      .selectFrom('webhooks')
      .select(['callback_url', 'hmac_secret'])
      .where('id', '=', webhookId)
      .executeTakeFirst();
    if (!row) return undefined;
    if (this.#cache.size >= MAX_CACHED) this.#cache.clear();
    const target = { callbackUrl: row.callback_url, hmacSecret: row.hmac_secret };
    this.#cache.set(webhookId, target);
    return target;
  }
}
