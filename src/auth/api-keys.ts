import type { Static } from 'typebox';
import type { NewApiKeyBody } from './contract.js';
import { randomUUID } from 'node:crypto';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { NotFound } from '../base/errors.js';
import type { Actor } from '../core/access/actor.js';
import { apiKeyPrefix, hashToken, newApiKey } from '../core/identity/secrets.js';
import { writeTransaction } from '../store/db/dialect.js';

/** An API key as GET /api/key lists it: `id` is the public prefix, never the secret (Contract). */
export interface ApiKeyItem {
  id: string;
  description: string;
  created: string;
  lastUsed: string | null;
  expires: string;
  apiKeyType: 'generic';
  /** Made for an AI agent (POST /api/key `agent`). */
  agent: boolean;
  readOnly: boolean;
}

/**
 * POST /api/key: a key with its owner's permissions, valid 10 years by default (spec: Limits).
 * The whole key is returned once; rotation is creating a new key (with the old one) and revoking the old.
 */
export async function createApiKey(
  deps: Deps,
  actor: Actor,
  options: NonNullable<Static<typeof NewApiKeyBody>>,
): Promise<string> {
  const { key, prefix } = newApiKey();
  const now = deps.clock.now();
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await trx
      .insertInto('auth_tokens')
      .values({
        id: randomUUID(),
        token_hash: hashToken(key),
        kind: 'api_key',
        user_id: actor.userId,
        tenant_id: actor.tenantId,
        // A key stands for an integration, which has no second factor to offer.
        unlocked: 1,
        prefix,
        description: options.description ?? '',
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + deps.config.apiKeyTtlDays * 86_400_000).toISOString(),
        last_used_at: null,
        agent: options.agent ? 1 : 0,
        read_only: options.readOnly ? 1 : 0,
      })
      .execute();
    await recordAction(trx, actor, {
      activityType: 'apiKeyCreated',
      objectType: 'apiKey',
      objectId: prefix,
      at: now,
      ...(options.agent || options.readOnly
        ? { data: { agent: options.agent === true, readOnly: options.readOnly === true } }
        : {}),
    });
  });
  return key;
}

export async function listApiKeys(deps: Deps, actor: Actor): Promise<ApiKeyItem[]> {
  const rows = await deps.db
    .selectFrom('auth_tokens')
    .select(['prefix', 'description', 'created_at', 'last_used_at', 'expires_at', 'agent', 'read_only'])
    .where('user_id', '=', actor.userId)
    .where('kind', '=', 'api_key')
    .orderBy('created_at')
    .execute();
  return rows.map((r) => ({
    id: r.prefix ?? '',
    description: r.description ?? '',
    created: r.created_at,
    lastUsed: r.last_used_at,
    expires: r.expires_at,
    apiKeyType: 'generic',
    agent: r.agent === 1,
    readOnly: r.read_only === 1,
  }));
}

/**
 * DELETE /api/key/:token with the whole key or its prefix: invalid at once, for good (spec: API key).
 * Only the caller's own keys; anyone else's is "not found" so keys of others cannot be probed.
 */
export async function revokeApiKey(deps: Deps, actor: Actor, options: { key: string }): Promise<void> {
  const prefix = apiKeyPrefix(options.key);
  if (!prefix) throw new NotFound('No such API key');
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const deleted = await trx
      .deleteFrom('auth_tokens')
      .where('prefix', '=', prefix)
      .where('kind', '=', 'api_key')
      .where('user_id', '=', actor.userId)
      .executeTakeFirst();
    if (deleted.numDeletedRows === 0n) throw new NotFound('No such API key');
    await recordAction(trx, actor, {
      activityType: 'apiKeyRevoked',
      objectType: 'apiKey',
      objectId: prefix,
      at: deps.clock.now(),
    });
  });
}
