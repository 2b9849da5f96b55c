import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Actor } from '../access/actor.js';
import type { Deps } from '../deps.js';
import { LimitExceeded } from '../../base/errors.js';
import { getProperties } from '../settings/tenant-settings.js';
import { BlobTooLarge } from '../../store/blobs/blob-store.js';
import type { SqlDialect } from '../../store/db/dialect.js';
import type { Database } from '../../store/db/schema.js';
import type { StoredBytes } from '../../store/files/file-store.js';

const MB = 1024 * 1024;

export interface StorageUse {
  used: number;
  limit: number;
}

/** `storage.used`/`storage.limit` of the caller's organization, in bytes (spec: Limits, Storage). */
/**
 * What an upload may take: the largest single file (`dropZoneMaxSize` MB, default 40) and the
 * organization's storage use and quota (spec: Limits, Storage), from one read of the tenant properties.
 */
export async function uploadAllowance(
  deps: Deps,
  actor: Pick<Actor, 'tenantId' | 'organizationId'>,
): Promise<{ limit: number; storage: StorageUse }> {
  const [row, properties] = await Promise.all([
    deps.db
      .selectFrom('files')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('size'), eb.lit(0)).as('used'))
      .where('organization_id', '=', actor.organizationId)
      .executeTakeFirstOrThrow(),
    getProperties(deps, actor),
  ]);
  return {
    limit: properties.dropZoneMaxSize * MB,
    storage: { used: Number(row.used), limit: properties.storageLimitMb * MB },
  };
}

/**
 * The bytes of an upload, stored: within the upload limit and what the quota had left when it began
 * (so an upload that alone would not fit stops while streaming), or 413 LIMIT_EXCEEDED. The quota
 * is then held by `reserveStorage` in the transaction that makes the file.
 */
export async function storeUploadBytes(
  deps: Deps,
  owner: Pick<Actor, 'tenantId' | 'organizationId'>,
  stream: Readable,
): Promise<{ stored: StoredBytes; storage: StorageUse }> {
  const { limit, storage } = await uploadAllowance(deps, owner);
  const remaining = Math.max(0, storage.limit - storage.used);
  try {
    return { stored: await deps.files.storeBytes(stream, { maxBytes: Math.min(limit, remaining) }), storage };
  } catch (error) {
    if (!(error instanceof BlobTooLarge)) throw error;
    stream.resume();
    throw limit <= remaining
      ? new LimitExceeded(`The file is larger than the upload limit of ${limit / MB} MB`)
      : quotaUsedUp(storage);
  }
}

/**
 * Inside the transaction that makes a file of `size` bytes: the organization's use read again under
 * a lock (its row, FOR UPDATE, on PostgreSQL; SQLite's one writer is writeTransaction's), so that
 * uploads finishing together cannot pass the quota between them (spec: Limits, Storage). Answers
 * the use with the file counted, or 413 LIMIT_EXCEEDED.
 */
export async function reserveStorage(
  trx: Kysely<Database>,
  dialect: SqlDialect,
  owner: Pick<Actor, 'organizationId'>,
  size: number,
  limit: number,
): Promise<StorageUse> {
  const organization = trx.selectFrom('organizations').select('id').where('id', '=', owner.organizationId);
  await (dialect.skipLocked ? organization.forUpdate() : organization).execute();
  const row = await trx
    .selectFrom('files')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('size'), eb.lit(0)).as('used'))
    .where('organization_id', '=', owner.organizationId)
    .executeTakeFirstOrThrow();
  const used = Number(row.used);
  if (used + size > limit) throw quotaUsedUp({ used, limit });
  return { used: used + size, limit };
}

function quotaUsedUp(storage: StorageUse): LimitExceeded {
  return new LimitExceeded(`The organization's storage quota is used up (${storage.limit} bytes)`);
}
