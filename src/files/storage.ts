import type { Actor } from '../auth/actor.js';
import type { Deps } from '../deps.js';
import { getProperties } from '../settings/tenant-settings.js';

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
