import type { Static } from 'typebox';
import type { RotateSecretBody } from './contract.js';
import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { writeTransaction } from '../store/db/dialect.js';
import { newWebhookSecret } from './signature.js';
import { loadVisibleWebhook } from './webhook-access.js';

/**
 * The body of POST /webhooks/:webhookId/secret: `hmacSecret` generated (like at creation) when not given,
 * `graceHours` WEBHOOK_SECRET_GRACE_HOURS.
 */
export type SecretRotation = Static<typeof RotateSecretBody>;

export interface RotatedSecret {
  /** Shown here only, as at creation. */
  hmacSecret: string;
  /** Until when the replaced secret still signs deliveries; null when it was dropped at once. */
  previousSecretUntil: string | null;
}

/**
 * POST /webhooks/:webhookId/secret (issue 27, item 3): gives the webhook a new secret and keeps the
 * one it replaces for a grace period, during which every delivery is signed with both (the new one
 * first), so a receiver switches to the new secret whenever it likes without losing a delivery.
 * Only the two latest secrets sign: rotating again during a grace period drops the secret before
 * the one being replaced. A grace of 0 drops the replaced secret at once (a leaked secret). Once
 * the grace period is over the old secret is deleted from the database (forgetExpiredSecrets).
 * Reached as the webhook's other calls are (webhook-access.ts); audited without the secrets.
 */
export async function rotateSecret(
  deps: Deps,
  actor: Actor,
  webhookId: string,
  rotation: SecretRotation,
): Promise<RotatedSecret> {
  const webhook = await loadVisibleWebhook(deps, actor, webhookId);
  const now = deps.clock.now();
  const graceHours = rotation.graceHours ?? deps.config.webhookSecretGraceHours;
  const hmacSecret = rotation.hmacSecret ?? newWebhookSecret();
  const previousSecretUntil =
    graceHours > 0 ? new Date(now.getTime() + graceHours * 3_600_000).toISOString() : null;
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await trx
      .updateTable('webhooks')
      .set((eb) => ({
        hmac_secret: hmacSecret,
        // From the row as it is now, not as read above: a concurrent rotation's secret is the one
        // being replaced.
        previous_hmac_secret: previousSecretUntil === null ? null : eb.ref('hmac_secret'),
        previous_secret_until: previousSecretUntil,
      }))
      .where('id', '=', webhook.id)
      .execute();
    await recordAction(trx, actor, {
      activityType: 'webhookSecretRotated',
      objectType: 'webhook',
      objectId: webhook.id,
      data: { chosen: rotation.hmacSecret !== undefined, graceHours, previousSecretUntil },
      at: now,
    });
  });
  return { hmacSecret, previousSecretUntil };
}

/**
 * Deletes the secrets whose grace period is over (deliveries already stopped using them: see
 * signingSecrets). Runs every minute on one node (webhook-jobs.ts). Returns how many went.
 */
export async function forgetExpiredSecrets(deps: Deps, now: Date): Promise<number> {
  const result = await deps.db
    .updateTable('webhooks')
    .set({ previous_hmac_secret: null, previous_secret_until: null })
    .where('previous_secret_until', '<=', now.toISOString())
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
