import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../store/db/schema.js';
import { hashToken, newToken } from './secrets.js';

/** Opens a session token for a user; locked when the account has MFA (spec: Session token table). */
export async function createSession(
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
