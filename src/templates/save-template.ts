import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import type {
  CreateTemplateBody,
  TemplateData as TemplateDataSchema,
  TemplateEdit as TemplateEditSchema,
} from './contract.js';
import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { LimitExceeded, VersionMismatch } from '../base/errors.js';
import { claimFiles, FROM_SAVE_FILE } from '../core/changes/file-usage.js';
import { readJson, writeJson } from '../store/db/json.js';
import { writeTransaction } from '../store/db/dialect.js';
import { loadChangeableTemplate } from '../core/access/template-access.js';
import { resolveAudience } from '../core/access/audience.js';
import { loadUsableDefinition } from '../core/documents/definition-access.js';

/** `__users`, `__groups`: users (ids or login names) and groups (organization ids) the template is shown to. */
export type TemplateData = Static<typeof TemplateDataSchema>;

const BULK_LIMIT = 100;

/** Where a template's audience sits in the request, for error messages. */
function audiencePaths(data: string) {
  return { users: `${data}.__users`, groups: `${data}.__groups` };
}

/**
 * POST /templates (spec Templates; Files usage rule 5): the template `file` must be an unused upload,
 * or `cloneFile` makes the template its own copy. A template is seen by its owner, the `__users` and
 * `__groups` it names (none by default) and administrators (template-access.ts). Its `documentType`
 * must be one the caller may use (spec Documents rule 4).
 */
export async function createTemplate(
  deps: Deps,
  actor: Actor,
  options: Static<typeof CreateTemplateBody>,
): Promise<{ id: string }> {
  const id = randomUUID();
  const now = deps.clock.now();
  const { file, __users, __groups, ...data } = options.data;
  if (data.documentType !== undefined)
    await loadUsableDefinition(deps.db, actor, data.documentType, 'data.documentType');
  const audience = await resolveAudience(
    deps.db,
    actor,
    { users: __users, groups: __groups },
    audiencePaths('data'),
  );
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const files = file
      ? await claimFiles(
          trx,
          actor,
          [{ fileId: file, field: 'data.file', kinds: FROM_SAVE_FILE, clone: options.cloneFile }],
          `template:${id}`,
          now,
        )
      : undefined;
    await trx
      .insertInto('templates')
      .values({
        id,
        tenant_id: actor.tenantId,
        organization_id: actor.organizationId,
        owner_id: actor.userId,
        file_id: files?.get('data.file')?.id ?? null,
        data: writeJson(data),
        users: writeJson(audience.users ?? [actor.userId]),
        groups: writeJson(audience.groups ?? []),
        version: 1,
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
      })
      .execute();
    await recordAction(trx, actor, {
      activityType: 'templateCreated',
      objectType: 'template',
      objectId: id,
      data: { name: options.data.name },
      at: now,
    });
  });
  return { id };
}

/** `version`: when given, must be the current `_version` (409 otherwise). */
export type TemplateEdit = Static<typeof TemplateEditSchema>;

/**
 * PUT /templates: edits one template or up to 100, all or none. A template the caller may not see is
 * 404; one they see but do not own (nor administer) is 403. A new `file` follows rule 5 like on
 * creation; `__users`/`__groups` replace the audience when given; a new `documentType` as on creation.
 */
export async function editTemplates(
  deps: Deps,
  actor: Actor,
  edits: TemplateEdit[],
): Promise<{ id: string; _version: number }[]> {
  if (edits.length > BULK_LIMIT) throw new LimitExceeded(`At most ${BULK_LIMIT} templates per request`);
  const now = deps.clock.now();
  return writeTransaction(deps.db, deps.dialect, async (trx) => {
    const results: { id: string; _version: number }[] = [];
    for (const [i, edit] of edits.entries()) {
      const row = await loadChangeableTemplate(trx, actor, edit.id);
      const expected = edit.version ?? row.version;
      const { file, __users, __groups, ...data } = edit.data;
      const prefix = edits.length > 1 ? `[${i}].data` : 'data';
      // A type the template already had is kept even if this editor may not use it.
      const kept = readJson<{ documentType?: string }>(row.data, {}).documentType;
      if (data.documentType !== undefined && data.documentType !== kept)
        await loadUsableDefinition(trx, actor, data.documentType, `${prefix}.documentType`);
      const audience = await resolveAudience(
        trx,
        actor,
        { users: __users, groups: __groups },
        audiencePaths(prefix),
      );
      let fileId = row.file_id;
      if (file !== undefined && file !== row.file_id) {
        const field = edits.length > 1 ? `[${i}].data.file` : 'data.file';
        const claimed = await claimFiles(
          trx,
          actor,
          [{ fileId: file, field, kinds: FROM_SAVE_FILE, clone: edit.cloneFile }],
          `template:${row.id}`,
          now,
        );
        fileId = claimed.get(field)?.id ?? null;
      }
      const updated = await trx
        .updateTable('templates')
        .set({
          data: writeJson(data),
          file_id: fileId,
          ...(audience.users ? { users: writeJson(audience.users) } : {}),
          ...(audience.groups ? { groups: writeJson(audience.groups) } : {}),
          version: expected + 1,
          updated_at: now.toISOString(),
        })
        .where('id', '=', row.id)
        .where('version', '=', expected)
        .executeTakeFirst();
      if (updated.numUpdatedRows === 0n) throw new VersionMismatch();
      await recordAction(trx, actor, {
        activityType: 'templateEdited',
        objectType: 'template',
        objectId: row.id,
        at: now,
      });
      results.push({ id: row.id, _version: expected + 1 });
    }
    return results;
  });
}
