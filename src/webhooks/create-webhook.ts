import type { Static } from 'typebox';
import type { CreateWebhookBody } from './contract.js';
import { randomUUID } from 'node:crypto';
import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { Forbidden, NotFound, ValidationError } from '../base/errors.js';
import { isTenantWide } from '../core/access/roles.js';
import { CallbackRefused, checkCallbackUrl } from './ssrf-guard.js';
import { newWebhookSecret } from './signature.js';
import { assertMayUseWebhooks } from './webhook-access.js';
import { webhookView, type WebhookView } from './webhook-view.js';
import { writeTransaction } from '../store/db/dialect.js';
import { findInTenant } from '../store/db/rows.js';

/**
 * The body of POST /webhooks: `hmacSecret` is generated when not given; `name`, for `organization`, the
 * organization's id (Contract; default the creator's).
 */
export type NewWebhook = Static<typeof CreateWebhookBody>;

/**
 * POST /webhooks (spec: Webhooks). Organization administrators (and users granted `use_webhooks`)
 * create webhooks for their own organization only; global and super administrators for the whole
 * tenant or any one organization of it. The callback URL must pass the SSRF guard. The answer is the
 * only place the secret is ever shown.
 */
export async function createWebhook(deps: Deps, actor: Actor, input: NewWebhook): Promise<WebhookView> {
  assertMayUseWebhooks(actor);
  const tenantWide = isTenantWide(actor.role);
  let organizationId: string | null = null;
  let name: string;
  if (input.type === 'tenant') {
    if (!tenantWide) throw new Forbidden('Only global and super administrators create tenant webhooks');
    if (input.name !== undefined && input.name !== actor.tenantId && input.name !== actor.tenantName)
      throw new ValidationError(
        '"name" names the organization of an organization webhook; leave it out for a tenant webhook',
      );
    name = actor.tenantId;
  } else {
    organizationId = input.name ?? actor.organizationId;
    if (!tenantWide && organizationId !== actor.organizationId)
      throw new Forbidden('You may create webhooks for your own organization only');
    const organization = await findInTenant(deps.db, 'organizations', actor.tenantId, organizationId);
    if (!organization) throw new NotFound('No such organization');
    name = organizationId;
  }
  try {
    await checkCallbackUrl(input.callbackUrl, { allowPrivate: deps.config.webhookAllowPrivate });
  } catch (error) {
    if (error instanceof CallbackRefused) throw new ValidationError(error.message);
    throw error;
  }
  const now = deps.clock.now();
  const row = {
    id: randomUUID(),
    tenant_id: actor.tenantId,
    type: input.type,
    organization_id: organizationId,
    name,
    callback_url: input.callbackUrl,
    hmac_secret: input.hmacSecret ?? newWebhookSecret(),
    creator_id: actor.userId,
    creator_name: actor.name,
    created_at: now.toISOString(),
    paused_at: null,
  };
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await trx.insertInto('webhooks').values(row).execute();
    await recordAction(trx, actor, {
      activityType: 'webhookCreated',
      objectType: 'webhook',
      objectId: row.id,
      // The origin only: a callback URL may carry credentials in its path or query.
      data: { type: row.type, name, callbackOrigin: new URL(row.callback_url).origin },
      at: now,
    });
  });
  return { ...webhookView(row), hmacSecret: row.hmac_secret };
}
