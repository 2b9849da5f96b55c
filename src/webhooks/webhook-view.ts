import type { Selectable } from 'kysely';
import type { WebhookTable } from '../store/db/schema.js';

/** A webhook as the API shows it (spec: Webhook). */
export interface WebhookView {
  id: string;
  /** The login name of who holds it: its creator, or whom an administrator transferred it to. */
  creator: string;
  createDate: string;
  type: 'organization' | 'tenant';
  /** The id of what it covers: the organization, or for a tenant webhook the tenant. */
  name: string;
  callbackUrl: string;
  /** `paused` while no one entitled holds it (core/events/webhook-holders.ts): nothing is delivered. */
  state: 'active' | 'paused';
  pausedAt: string | null;
  /** Only in the answer to its creation (spec: "returned to the creator only"). */
  hmacSecret?: string;
}

export function webhookView(
  row: Pick<
    Selectable<WebhookTable>,
    'id' | 'creator_name' | 'created_at' | 'type' | 'name' | 'callback_url' | 'paused_at'
  >,
): WebhookView {
  return {
    id: row.id,
    creator: row.creator_name,
    createDate: row.created_at,
    type: row.type,
    name: row.name,
    callbackUrl: row.callback_url,
    state: row.paused_at === null ? 'active' : 'paused',
    pausedAt: row.paused_at,
  };
}
