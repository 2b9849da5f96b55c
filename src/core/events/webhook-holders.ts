import type { Kysely, Selectable } from 'kysely';
import type { Actor } from '../access/actor.js';
import { record } from '../audit/record.js';
import { effectiveRights, isTenantWide } from '../access/roles.js';
import { readJson } from '../../store/db/json.js';
import type { Database, UserTable, WebhookTable } from '../../store/db/schema.js';

/**
 * Who may hold a webhook (issue 37, item 7: webhooks do not outlive their creator's rights). A webhook
 * delivers its scope's events on the authority of the user who holds it (its creator, or whom an
 * administrator transferred it to), so only while that user could create it now: an active account
 * with the right `use_webhooks` whose role reaches the scope (a tenant webhook: a global or super
 * administrator; an organization webhook: one of that organization, or a global or super
 * administrator). Otherwise it is paused (`paused_at`): no event is queued for it and a queued one is
 * not sent, until its holder is entitled again or an administrator of its scope transfers it.
 */
export function mayHold(
  user: Pick<Selectable<UserTable>, 'status' | 'role' | 'rights' | 'organization_id'> | undefined,
  webhook: Pick<Selectable<WebhookTable>, 'type' | 'organization_id'>,
): boolean {
  if (!user || user.status !== 'active') return false;
  if (!effectiveRights(user.role, readJson<string[]>(user.rights, [])).includes('use_webhooks')) return false;
  if (isTenantWide(user.role)) return true;
  return webhook.type === 'organization' && webhook.organization_id === user.organization_id;
}

/**
 * Pauses the webhooks `userId` holds that they may no longer hold, and resumes those they may hold
 * again, each with an audit record (`webhookPaused`, `webhookResumed`). Runs in the transaction of
 * every change to a user's status, role, rights or organization, and of their deletion (`deleted`:
 * every webhook they held pauses).
 */
export async function reconcileHeldWebhooks(
  trx: Kysely<Database>,
  change: { tenantId: string; userId: string; by: Actor | null; now: Date; deleted?: boolean },
): Promise<void> {
  const held = await trx
    .selectFrom('webhooks')
    .select(['id', 'type', 'organization_id', 'paused_at'])
    .where('tenant_id', '=', change.tenantId)
    .where('creator_id', '=', change.userId)
    .execute();
  if (held.length === 0) return;
  const user = change.deleted
    ? undefined
    : await trx
        .selectFrom('users')
        .select(['status', 'role', 'rights', 'organization_id'])
        .where('id', '=', change.userId)
        .executeTakeFirst();
  for (const webhook of held) {
    const entitled = mayHold(user, webhook);
    if (entitled === (webhook.paused_at === null)) continue;
    await trx
      .updateTable('webhooks')
      .set({ paused_at: entitled ? null : change.now.toISOString() })
      .where('id', '=', webhook.id)
      .execute();
    await record(trx, {
      tenantId: change.tenantId,
      actorId: change.by?.name ?? null,
      activityType: entitled ? 'webhookResumed' : 'webhookPaused',
      objectType: 'webhook',
      objectId: webhook.id,
      ...(change.by ? { requestId: change.by.requestId } : {}),
      data: { holder: change.userId },
      at: change.now,
    });
  }
}
