import type { Kysely } from 'kysely';
import { ValidationError } from '../base/errors.js';
import type { Database } from '../store/db/schema.js';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Who a `shareTo` names: an active user of the tenant (by login name or e-mail), or an e-mail address. */
export interface ResolvedRecipient {
  /** `shareTo` trimmed and lower-cased: how a recipient is told apart from the others (rule 1). */
  key: string;
  user: { id: string; email: string | null; name: string } | undefined;
  email: string | null;
}

/**
 * spec Sharing `shareTo`: "e-mail or username of the recipient". A user of the tenant when one has that
 * name or e-mail (suspended: 400), otherwise an external recipient, whose `shareTo` must be an e-mail.
 * Shared by POST /share and by PUT /share when it moves a share to another recipient.
 */
export async function resolveRecipient(
  db: Kysely<Database>,
  tenantId: string,
  shareTo: string,
  at: string,
): Promise<ResolvedRecipient> {
  const key = shareTo.trim().toLowerCase();
  const user = await db
    .selectFrom('users')
    .select(['id', 'email', 'status', 'name'])
    .where('tenant_id', '=', tenantId)
    .where((eb) => eb.or([eb('name', '=', key), eb('email', '=', key)]))
    .executeTakeFirst();
  if (!user && !EMAIL.test(key))
    throw new ValidationError(`${at}.shareTo`, 'must be a user name or an e-mail address');
  if (user && user.status !== 'active') throw new ValidationError(`${at}.shareTo`, 'is a suspended user');
  return {
    key,
    user: user ? { id: user.id, email: user.email, name: user.name } : undefined,
    email: user ? user.email : key,
  };
}
