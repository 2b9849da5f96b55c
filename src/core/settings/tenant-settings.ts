import type { Kysely } from 'kysely';
import type { Actor } from '../access/actor.js';
import { recordAction } from '../audit/record.js';
import type { Deps } from '../deps.js';
import { ValidationError } from '../../base/errors.js';
import { readJson, writeJson } from '../../store/db/json.js';
import { assertRole } from '../access/user-access.js';
import type { WOPI_CLIENTS } from './properties.js';
import { readProperties, type TenantProperties, type TenantPropertiesPatch } from './properties.js';
import { writeTransaction } from '../../store/db/dialect.js';
import type { Database, Json } from '../../store/db/schema.js';

const TENANT_ADMINS = ['globalAdmin', 'superAdmin'];

/** The tenant's JSON columns that PUT calls merge into. */
type TenantJson = 'properties' | 'counters';

/** A JSON column of the tenant, as stored. */
async function readTenantJson(db: Kysely<Database>, tenantId: string, column: TenantJson): Promise<Json> {
  const tenant = await db
    .selectFrom('tenants')
    .select(column)
    .where('id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return column === 'properties' ? tenant.properties : tenant.counters;
}

/**
 * Merges `patch` into a JSON column of the caller's tenant, key by key, with its audit record, in a
 * transaction of its own. Returns the merged value as stored.
 */
async function mergeTenantJson<V>(
  deps: Deps,
  actor: Actor,
  column: TenantJson,
  patch: Partial<Record<string, V>>,
  audit: { activityType: string; data: Record<string, unknown> },
): Promise<Record<string, V>> {
  return writeTransaction(deps.db, deps.dialect, async (trx) => {
    const merged = {
      ...readJson<Record<string, V>>(await readTenantJson(trx, actor.tenantId, column), {}),
      ...patch,
    };
    await trx
      .updateTable('tenants')
      .set({ [column]: writeJson(merged) })
      .where('id', '=', actor.tenantId)
      .execute();
    await recordAction(trx, actor, {
      ...audit,
      objectType: 'tenant',
      objectId: actor.tenantId,
      at: deps.clock.now(),
    });
    return merged as Record<string, V>;
  });
}

export async function getProperties(deps: Deps, actor: Pick<Actor, 'tenantId'>): Promise<TenantProperties> {
  const properties = await readTenantJson(deps.db, actor.tenantId, 'properties');
  return readProperties(properties, deps.config.sessionTtlDays);
}

/**
 * GET /settings/properties: what PUT /settings/properties set (defaults for the rest), in the shape it
 * takes, for those who may set it; other users see their part in the login `settings`.
 */
export async function readTenantProperties(deps: Deps, actor: Actor): Promise<TenantProperties> {
  assertRole(actor, TENANT_ADMINS, 'global or super administrators');
  return getProperties(deps, actor);
}

/** PUT /settings/properties (global and super administrators): changes the named tenant properties. */
export async function updateProperties(
  deps: Deps,
  actor: Actor,
  patch: TenantPropertiesPatch,
): Promise<TenantProperties> {
  assertRole(actor, TENANT_ADMINS, 'global or super administrators');
  // Refused rather than silently signing lower than asked: a timestamp needs a TSA (DESIGN: never fake one).
  if (patch.defaultPadesLevel && patch.defaultPadesLevel !== 'B-B' && !deps.config.tsaUrl) {
    throw new ValidationError(
      'defaultPadesLevel',
      `must be B-B or null: ${patch.defaultPadesLevel} needs a time-stamp authority and none is configured (TSA_URL)`,
    );
  }
  const stored = await mergeTenantJson<unknown>(deps, actor, 'properties', patch, {
    activityType: 'propertiesUpdated',
    data: { ...patch },
  });
  return readProperties(writeJson(stored), deps.config.sessionTtlDays);
}

export async function getCounters(deps: Deps, actor: Actor): Promise<Record<string, number>> {
  assertRole(actor, ['superAdmin'], 'super administrators');
  return readJson<Record<string, number>>(await readTenantJson(deps.db, actor.tenantId, 'counters'), {});
}

/** PUT /counters (super administrators only, spec Versioning 3): sets named counters. */
export async function updateCounters(
  deps: Deps,
  actor: Actor,
  counters: Record<string, number>,
): Promise<Record<string, number>> {
  assertRole(actor, ['superAdmin'], 'super administrators');
  return mergeTenantJson(deps, actor, 'counters', counters, {
    activityType: 'countersUpdated',
    data: { counters },
  });
}

/** File extensions each supported WOPI client opens. */
const WOPI_EXTENSIONS: Record<(typeof WOPI_CLIENTS)[number], string[]> = {
  collabora: ['doc', 'docx', 'odt', 'rtf', 'txt', 'xls', 'xlsx', 'ods', 'csv', 'ppt', 'pptx', 'odp'],
  onlyoffice: ['doc', 'docx', 'odt', 'rtf', 'txt', 'xls', 'xlsx', 'ods', 'csv', 'ppt', 'pptx', 'odp', 'pdf'],
};

/** GET /wopi/extensions (spec Versioning 4): the configured client and what it opens. */
export async function wopiExtensions(
  deps: Deps,
  actor: Actor,
): Promise<{ client: string; extensions: string[] }> {
  const { wopiClient } = await getProperties(deps, actor);
  return { client: wopiClient ?? '', extensions: wopiClient ? WOPI_EXTENSIONS[wopiClient] : [] };
}
