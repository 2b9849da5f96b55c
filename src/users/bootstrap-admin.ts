import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../store/db/schema.js';
import { hashPassword } from '../core/identity/secrets.js';
import { record } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { writeJson } from '../store/db/json.js';
import { RIGHTS } from '../core/access/roles.js';
import { writeTransaction } from '../store/db/dialect.js';

/** The organization or user of a tenant that has this name, if there is one. */
function namedIn(db: Kysely<Database>, table: 'organizations' | 'users', tenantId: string, name: string) {
  return db
    .selectFrom(table)
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('name', '=', name)
    .executeTakeFirst();
}

/** Finds a tenant by name, creating it (with its first organization) when missing. */
export async function ensureTenant(
  deps: Pick<Deps, 'db' | 'clock'>,
  name: string,
): Promise<{ id: string; organizationId: string }> {
  const now = deps.clock.now().toISOString();
  const existing = await deps.db
    .selectFrom('tenants')
    .select('id')
    .where('name', '=', name)
    .executeTakeFirst();
  const tenantId = existing?.id ?? randomUUID();
  if (!existing) {
    await deps.db
      .insertInto('tenants')
      .values({ id: tenantId, name, properties: writeJson({}), counters: writeJson({}), created_at: now })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
  }
  const tenant = await deps.db
    .selectFrom('tenants')
    .select('id')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  await deps.db
    .insertInto('organizations')
    .values({ id: randomUUID(), tenant_id: tenant.id, name, created_at: now })
    .onConflict((oc) => oc.columns(['tenant_id', 'name']).doNothing())
    .execute();
  const organization = await namedIn(deps.db, 'organizations', tenant.id, name);
  if (!organization) throw new Error(`organization ${name} missing after its insert`);
  return { id: tenant.id, organizationId: organization.id };
}

/**
 * Creates a super-administrator with every right when no user of that name exists in the tenant
 * (Contract: ADMIN_EMAIL/ADMIN_PASSWORD at start, and `signery create-admin`). Returns whether it did.
 */
export async function bootstrapAdmin(
  deps: Pick<Deps, 'db' | 'dialect' | 'clock'>,
  options: { tenant: string; name: string; password: string },
): Promise<boolean> {
  const tenant = await ensureTenant(deps, options.tenant);
  const name = options.name.trim().toLowerCase();
  if (await namedIn(deps.db, 'users', tenant.id, name)) return false;
  const now = deps.clock.now();
  const id = randomUUID();
  const passwordHash = await hashPassword(options.password);
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await trx
      .insertInto('users')
      .values({
        id,
        tenant_id: tenant.id,
        organization_id: tenant.organizationId,
        name,
        display_name: 'Administrator',
        email: name.includes('@') ? name : null,
        password_hash: passwordHash,
        role: 'superAdmin',
        rights: writeJson([...RIGHTS]),
        status: 'active',
        photo: null,
        config: writeJson({ signature: [] }),
        mfa_secret: null,
        mfa_enabled: 0,
        created_by: null,
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
      })
      .onConflict((oc) => oc.columns(['tenant_id', 'name']).doNothing())
      .execute();
    await record(trx, {
      tenantId: tenant.id,
      actorId: 'system',
      activityType: 'userCreated',
      objectType: 'user',
      objectId: id,
      data: { name, role: 'superAdmin', bootstrap: true },
      at: now,
    });
  });
  return true;
}
