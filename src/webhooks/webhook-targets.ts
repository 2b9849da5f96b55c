import { performance } from 'node:perf_hooks';
import type { Kysely } from 'kysely';
import type { Database } from '../store/db/schema.js';

/** Where a webhook's requests go and the secrets they are signed with. */
export interface WebhookTarget {
  callbackUrl: string;
  /** The current secret: `x-signery-signature`, and the first `webhook-signature` entry. */
  hmacSecret: string;
  /** The secret a rotation replaced, while it still signs (its grace period). */
  previous: { secret: string; until: Date } | null;
  /** No one entitled holds the webhook (core/events/webhook-holders.ts): nothing is sent to it. */
  paused: boolean;
}

/**
 * The secrets a delivery made at `now` is signed with, the current one first: during a rotation's
 * grace period the previous one too, afterwards never again (even before it is cleared from the
 * database, see forgetExpiredSecrets).
 */
export function signingSecrets(target: WebhookTarget, now: Date): string[] {
  return target.previous && now < target.previous.until
    ? [target.hmacSecret, target.previous.secret]
    : [target.hmacSecret];
}

// Far more webhooks than a node delivers to at once; past it the cache starts over.
const MAX_CACHED = 10_000;
/** How long a worker keeps a webhook's URL and secrets: a rotation reaches every node within it. */
export const TARGET_CACHE_MS = 5_000;

/**
 * The URL and secrets of webhooks, read once every few seconds per worker rather than at every
 * attempt. The URL never changes (spec: Webhooks, "no update: delete and recreate"), and a deleted
 * webhook takes its delivery jobs with it in the same transaction (deleteWebhook): a job a worker
 * holds belongs to a webhook that existed when it was claimed. Only the secrets change, by rotation
 * (rotate-secret.ts): a node signs with the new one at most TARGET_CACHE_MS later, while the old one
 * still verifies (its grace period), so no receiver notices; an expired previous secret is dropped at
 * use (signingSecrets), not at the next read.
 *
 * ```ts
 * const targets = new WebhookTargets();
 * const target = await targets.get(db, webhookId); // undefined: deleted
 * ```
 */
/** The webhook columns `webhookTarget` reads. */
export const TARGET_COLUMNS = [
  'paused_at',
  'callback_url',
  'hmac_secret',
  'previous_hmac_secret',
  'previous_secret_until',
] as const;

export class WebhookTargets {
  readonly #cache = new Map<string, { target: WebhookTarget; readAt: number }>();

  async get(db: Kysely<Database>, webhookId: string): Promise<WebhookTarget | undefined> {
    const cached = this.#cache.get(webhookId);
    if (cached && performance.now() - cached.readAt < TARGET_CACHE_MS) return cached.target;
    const row = await db
      .selectFrom('webhooks')
      .select(TARGET_COLUMNS)
      .where('id', '=', webhookId)
      .executeTakeFirst();
    if (!row) return undefined;
    if (this.#cache.size >= MAX_CACHED) this.#cache.clear();
    const target = webhookTarget(row);
    this.#cache.set(webhookId, { target, readAt: performance.now() });
    return target;
  }
}

/** A target from the webhook's row. */
export function webhookTarget(row: {
  paused_at: string | null;
  callback_url: string;
  hmac_secret: string;
  previous_hmac_secret: string | null;
  previous_secret_until: string | null;
}): WebhookTarget {
  return {
    paused: row.paused_at !== null,
    callbackUrl: row.callback_url,
    hmacSecret: row.hmac_secret,
    previous:
      row.previous_hmac_secret === null || row.previous_secret_until === null
        ? null
        : { secret: row.previous_hmac_secret, until: new Date(row.previous_secret_until) },
  };
}
