import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import { Forbidden, NotFound } from '../base/errors.js';
import type { Database } from '../store/db/schema.js';
import { isTenantWide } from '../core/access/roles.js';

/**
 * The organization a new or moved user joins (Contract: users created without `organization` join
 * their creator's). `organization` is an organization id or name; a global or super administrator
 * naming one that does not exist creates it.
 */
export async function resolveOrganization(
  trx: Kysely<Database>,
  actor: Actor,
  organization: string | undefined,
  now: Date,
): Promise<string> {
  if (organization === undefined) return actor.organizationId;
  const existing = await trx
    .selectFrom('organizations')
    .select('id')
    .where('tenant_id', '=', actor.tenantId)
    .where((eb) => eb.or([eb('id', '=', organization), eb('name', '=', organization)]))
    .executeTakeFirst();
  if (!isTenantWide(actor.role)) {
    if (existing?.id !== actor.organizationId) {
      throw new Forbidden('Organization administrators manage users of their own organization only');
    }
    return actor.organizationId;
  }
  if (existing) return existing.id;
  if (organization.trim() === '') throw new NotFound('No such organization');
  const id = randomUUID();
  await trx
    .insertInto('organizations')
    .values({ id, tenant_id: actor.tenantId, name: organization, created_at: now.toISOString() })
    .execute();
  return id;
}
