import type { Actor } from '../access/actor.js';
import { recordAction } from '../audit/record.js';
import type { Deps } from '../deps.js';
import { ValidationError } from '../errors.js';
import { readJson, writeJson } from '../../store/db/json.js';
import { assertRole } from '../access/user-access.js';
import type { WOPI_CLIENTS } from './properties.js';
import { readProperties, type TenantProperties, type TenantPropertiesPatch } from './properties.js';
import { writeTransaction } from '../../store/db/dialect.js';

const TENANT_ADMINS = ['globalAdmin', 'superAdmin'];

export async function getProperties(deps: Deps, actor: Pick<Actor, 'tenantId'>): Promise<TenantProperties> {
  const tenant = await deps.db
    .selectFrom('tenants')
    .select('properties')
    .where('id', '=', actor.tenantId)
    .executeTakeFirstOrThrow();
  return readProperties(tenant.properties, deps.config.sessionTtlDays);
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
  return writeTransaction(deps.db, deps.dialect, async (trx) => {
    const tenant = await trx
      .selectFrom('tenants')
      .select('properties')
      .where('id', '=', actor.tenantId)
      .executeTakeFirstOrThrow();
    const stored = { ...readJson<Record<string, unknown>>(tenant.properties, {}), ...patch };
    await trx
      .updateTable('tenants')
      .set({ properties: writeJson(stored) })
      .where('id', '=', actor.tenantId)
      .execute();
    await recordAction(trx, actor, {
      activityType: 'propertiesUpdated',
      objectType: 'tenant',
      objectId: actor.tenantId,
      data: { ...patch },
      at: deps.clock.now(),
    });
    return readProperties(writeJson(stored), deps.config.sessionTtlDays);
  });
}

export async function getCounters(deps: Deps, actor: Actor): Promise<Record<string, number>> {
  assertRole(actor, ['superAdmin'], 'super administrators');
  const tenant = await deps.db
    .selectFrom('tenants')
    .select('counters')
    .where('id', '=', actor.tenantId)
    .executeTakeFirstOrThrow();
  return readJson<Record<string, number>>(tenant.counters, {});
}

/** PUT /counters (super administrators only, spec Versioning 3): sets named counters. */
export async function updateCounters(
  deps: Deps,
  actor: Actor,
  counters: Record<string, number>,
): Promise<Record<string, number>> {
  assertRole(actor, ['superAdmin'], 'super administrators');
  return writeTransaction(deps.db, deps.dialect, async (trx) => {
    const tenant = await trx
      .selectFrom('tenants')
      .select('counters')
      .where('id', '=', actor.tenantId)
      .executeTakeFirstOrThrow();
    const merged = { ...readJson<Record<string, number>>(tenant.counters, {}), ...counters };
    await trx
      .updateTable('tenants')
      .set({ counters: writeJson(merged) })
      .where('id', '=', actor.tenantId)
      .execute();
    await recordAction(trx, actor, {
      activityType: 'countersUpdated',
      objectType: 'tenant',
      objectId: actor.tenantId,
      data: { counters },
      at: deps.clock.now(),
    });
    return merged;
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
