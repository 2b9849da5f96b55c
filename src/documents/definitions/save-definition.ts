import type { Static } from 'typebox';
import type { DefinitionChangesBody } from '../contract.js';
import type { Actor } from '../../core/access/actor.js';
import { recordAction } from '../../core/audit/record.js';
import type { Deps } from '../../core/deps.js';
import { Conflict, Forbidden, NotFound, ValidationError } from '../../base/errors.js';
import { claimFiles, FROM_SAVE_FILE } from '../../core/changes/file-usage.js';
import { DEFAULT_DEFINITION, type UsableBy } from '../../core/documents/definition-access.js';
import { resolveAudience } from '../../core/access/audience.js';
import type { DefinitionField } from '../../core/documents/definition-fields.js';
import { readJson, writeJson } from '../../store/db/json.js';
import { isTenantWide } from '../../core/access/roles.js';
import { writeTransaction } from '../../store/db/dialect.js';

export interface DefinitionView {
  name: string;
  templateFile: string | null;
  builtIn: boolean;
  _version: number;
  [key: string]: unknown;
}

/**
 * POST /definitions/documents/name and PUT /definitions/documents/:name (global and super
 * administrators: definitions are the tenant's): document
 * definitions beside the built-in `d_default`. A `templateFile` must be a new, unused upload (spec
 * Files usage rule 4). `fields` describe the `customFields` of documents of this type (issue 24, item
 * 14); `usableBy` says who may use it (spec Documents rule 4; core/documents/definition-access.ts), with
 * its users stored as ids; null opens it to everyone again.
 */
export async function saveDefinition(
  deps: Deps,
  actor: Actor,
  options: { name: string; data: Static<typeof DefinitionChangesBody>; create: boolean },
): Promise<DefinitionView> {
  // A definition is the tenant's (one name serves every organization): an organization administrator
  // changing it would reach into the other organizations.
  if (!isTenantWide(actor.role))
    throw new Forbidden(
      'Document definitions serve the whole tenant: only global and super administrators change them',
    );
  if (options.name === DEFAULT_DEFINITION)
    throw new ValidationError(`${DEFAULT_DEFINITION} is built in and cannot be changed`);
  const now = deps.clock.now();
  const { templateFile, usableBy, ...given } = options.data;
  assertUniqueKeys(given.fields ?? []);
  const data =
    usableBy === undefined
      ? given
      : { ...given, usableBy: usableBy && (await resolveUsableBy(deps, actor, usableBy)) };
  return writeTransaction(deps.db, deps.dialect, async (trx) => {
    const existing = await trx
      .selectFrom('definitions')
      .selectAll()
      .where('tenant_id', '=', actor.tenantId)
      .where('name', '=', options.name)
      .executeTakeFirst();
    if (options.create && existing) throw new Conflict(`A definition named ${options.name} already exists`);
    if (!options.create && !existing) throw new NotFound('No such definition');
    let fileId = existing?.template_file_id ?? null;
    if (templateFile !== undefined && templateFile !== fileId) {
      const claimed = await claimFiles(
        trx,
        actor,
        [{ fileId: templateFile, field: 'templateFile', kinds: FROM_SAVE_FILE }],
        `definition:${options.name}`,
        now,
      );
      fileId = claimed.get('templateFile')?.id ?? null;
    }
    const merged = { ...(existing ? readJson<Record<string, unknown>>(existing.data, {}) : {}), ...data };
    const version = (existing?.version ?? 0) + 1;
    if (existing) {
      await trx
        .updateTable('definitions')
        .set({ data: writeJson(merged), template_file_id: fileId, version, updated_at: now.toISOString() })
        .where('tenant_id', '=', actor.tenantId)
        .where('name', '=', options.name)
        .execute();
    } else {
      await trx
        .insertInto('definitions')
        .values({
          tenant_id: actor.tenantId,
          name: options.name,
          template_file_id: fileId,
          data: writeJson(merged),
          version,
          created_at: now.toISOString(),
          updated_at: now.toISOString(),
        })
        .execute();
    }
    await recordAction(trx, actor, {
      activityType: existing ? 'definitionEdited' : 'definitionCreated',
      objectType: 'definition',
      objectId: options.name,
      at: now,
    });
    return { ...merged, name: options.name, templateFile: fileId, builtIn: false, _version: version };
  });
}

/** A definition describes each field once: documents carry one `customFields` entry per key. */
function assertUniqueKeys(fields: readonly DefinitionField[]) {
  const keys = new Set<string>();
  for (const [i, field] of fields.entries()) {
    if (keys.has(field.key)) throw new ValidationError(`fields[${i}].key`, 'contains a duplicate value');
    keys.add(field.key);
  }
}

/** `usableBy` as stored: users as ids, groups checked against the tenant's organizations. */
async function resolveUsableBy(deps: Deps, actor: Actor, usableBy: NonNullable<UsableBy>) {
  const audience = await resolveAudience(deps.db, actor, usableBy, {
    users: 'usableBy.users',
    groups: 'usableBy.groups',
  });
  return { ...usableBy, ...audience };
}

/** GET /definitions/documents/:name, the built-in `d_default` included. */
export async function getDefinition(deps: Deps, actor: Actor, name: string): Promise<DefinitionView> {
  if (name === DEFAULT_DEFINITION)
    return { name, templateFile: null, builtIn: true, _version: 1, description: 'Default document' };
  const row = await deps.db
    .selectFrom('definitions')
    .selectAll()
    .where('tenant_id', '=', actor.tenantId)
    .where('name', '=', name)
    .executeTakeFirst();
  if (!row) throw new NotFound('No such definition');
  return {
    ...readJson<Record<string, unknown>>(row.data, {}),
    name,
    templateFile: row.template_file_id,
    builtIn: false,
    _version: row.version,
  };
}
