import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, Json } from '../../store/db/schema.js';
import { record } from '../audit/record.js';
import type { Deps } from '../deps.js';
import { readProperties } from '../settings/properties.js';
import { hashToken, newToken } from './secrets.js';

/** An account signing in, with what its session needs: whether it has MFA, its tenant's properties. */
export interface SignInAccount {
  id: string;
  tenant_id: string;
  name: string;
  status: string;
  mfa_enabled: number;
  /** The tenant's properties (session lifetime). */
  properties: Json;
}

/**
 * The accounts one may sign in to, as `SignInAccount`s: the caller narrows them (by tenant and name,
 * by e-mail, by id) and may select more.
 */
export function signInAccounts(db: Kysely<Database>) {
  return db
    .selectFrom('users')
    .innerJoin('tenants', 'tenants.id', 'users.tenant_id')
    .select([
      'users.id',
      'users.tenant_id',
      'users.name',
      'users.status',
      'users.mfa_enabled',
      'tenants.properties',
    ]);
}

/**
 * Opens a session for an account that has just proven who it is (password, activation token,
 * identity provider), with the audit record saying so, in the caller's transaction. The session is
 * locked when the account has MFA (spec: Session token table) and lasts the tenant's session lifetime.
 */
export async function openSession(
  trx: Kysely<Database>,
  deps: Pick<Deps, 'config'>,
  account: SignInAccount,
  audit: { activityType: string; data?: Record<string, unknown>; requestId: string; now: Date },
): Promise<{ token: string; id: string; unlocked: boolean }> {
  const { now } = audit;
  const unlocked = account.mfa_enabled === 0;
  const ttlDays = readProperties(account.properties, deps.config.sessionTtlDays).sessionTtlDays;
  const session = await createSession(trx, {
    userId: account.id,
    tenantId: account.tenant_id,
    unlocked,
    now,
    ttlDays,
  });
  await record(trx, {
    tenantId: account.tenant_id,
    actorId: account.name,
    activityType: audit.activityType,
    objectType: 'user',
    objectId: account.id,
    requestId: audit.requestId,
    data: audit.data,
    at: now,
  });
  return { ...session, unlocked };
}

/** Opens a session token for a user; locked when the account has MFA (spec: Session token table). */
async function createSession(
  db: Kysely<Database>,
  options: { userId: string; tenantId: string; unlocked: boolean; now: Date; ttlDays: number },
): Promise<{ token: string; id: string }> {
  const token = newToken();
  const id = randomUUID();
  await db
    .insertInto('auth_tokens')
    .values({
      id,
      token_hash: hashToken(token),
      kind: 'session',
      user_id: options.userId,
      tenant_id: options.tenantId,
      unlocked: options.unlocked ? 1 : 0,
      prefix: null,
      description: null,
      created_at: options.now.toISOString(),
      expires_at: new Date(options.now.getTime() + options.ttlDays * 86_400_000).toISOString(),
      last_used_at: options.now.toISOString(),
    })
    .execute();
  return { token, id };
}
