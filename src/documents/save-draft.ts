import type { Static } from 'typebox';
import type { DraftBody } from './contract.js';
import { randomUUID } from 'node:crypto';
import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { NotFound, VersionMismatch } from '../base/errors.js';
import { checkDraftFiles, FROM_SAVE_FILE, type FileUse } from '../core/changes/file-usage.js';
import { readJson, writeJson } from '../store/db/json.js';
import { writeTransaction } from '../store/db/dialect.js';
import { loadUsableDefinition } from '../core/documents/definition-access.js';

export interface DraftData {
  documentType?: string | undefined;
  pdfFile?: { content: string } | undefined;
  file?: { content: string; public?: boolean | undefined }[] | undefined;
  [key: string]: unknown;
}

/** The body of POST /drafts and PUT /drafts/{id}/{version}. */
export type DraftOptions = Static<typeof DraftBody>;

export interface DraftView {
  id: string;
  _version: number;
  data: DraftData;
  createDate: string;
  modifyDate: string;
}

/**
 * POST /drafts and PUT /drafts/:id/:version (spec Files usage rule 6): a draft holds files without
 * using them up, so a document made from it later may use them (rules 7 and 8: "unused or draft-only").
 * `cloneMainFile`/`cloneFiles` give the draft its own copies instead. A draft names only a document
 * type the caller may use (spec Documents rule 4), but may lack its required fields: it is a document
 * in preparation, checked when it becomes one.
 */
export async function saveDraft(
  deps: Deps,
  actor: Actor,
  options: DraftOptions & { id?: string | undefined; version?: number | undefined },
): Promise<DraftView> {
  const now = deps.clock.now();
  return writeTransaction(deps.db, deps.dialect, async (trx) => {
    const existing = options.id
      ? await trx
          .selectFrom('drafts')
          .selectAll()
          .where('id', '=', options.id)
          .where('tenant_id', '=', actor.tenantId)
          .where('owner_id', '=', actor.userId)
          .executeTakeFirst()
      : undefined;
    if (options.id && !existing) throw new NotFound('No such draft');
    const { documentType } = options.data;
    // A type the draft already had is kept even if the caller may no longer use it.
    if (documentType !== undefined && documentType !== readJson<DraftData>(existing?.data, {}).documentType)
      await loadUsableDefinition(trx, actor, documentType, 'data.documentType');
    const known = new Set<string>(existing ? readJson<string[]>(existing.files, []) : []);
    if (existing?.main_file_id) known.add(existing.main_file_id);
    const uses: FileUse[] = [];
    const { data } = options;
    if (data.pdfFile && !known.has(data.pdfFile.content)) {
      uses.push({
        fileId: data.pdfFile.content,
        field: 'data.pdfFile.content',
        kinds: FROM_SAVE_FILE,
        clone: options.cloneMainFile,
      });
    }
    for (const [n, a] of (data.file ?? []).entries()) {
      if (!known.has(a.content))
        uses.push({
          fileId: a.content,
          field: `data.file[${n}].content`,
          kinds: FROM_SAVE_FILE,
          clone: options.cloneFiles,
        });
    }
    const checked = await checkDraftFiles(trx, actor, uses, now);
    const stored: DraftData = {
      ...data,
      ...(data.pdfFile
        ? { pdfFile: { content: checked.get('data.pdfFile.content')?.id ?? data.pdfFile.content } }
        : {}),
      ...(data.file
        ? {
            file: data.file.map((a, n) => ({
              ...a,
              content: checked.get(`data.file[${n}].content`)?.id ?? a.content,
            })),
          }
        : {}),
    };
    const fileIds = (stored.file ?? []).map((a) => a.content);
    const id = existing?.id ?? randomUUID();
    if (existing) {
      const expected = options.version ?? existing.version;
      const updated = await trx
        .updateTable('drafts')
        .set({
          data: writeJson(stored),
          main_file_id: stored.pdfFile?.content ?? null,
          files: writeJson(fileIds),
          version: expected + 1,
          updated_at: now.toISOString(),
        })
        .where('id', '=', id)
        .where('version', '=', expected)
        .executeTakeFirst();
      if (updated.numUpdatedRows === 0n) throw new VersionMismatch();
    } else {
      await trx
        .insertInto('drafts')
        .values({
          id,
          tenant_id: actor.tenantId,
          owner_id: actor.userId,
          data: writeJson(stored),
          main_file_id: stored.pdfFile?.content ?? null,
          files: writeJson(fileIds),
          version: 1,
          created_at: now.toISOString(),
          updated_at: now.toISOString(),
        })
        .execute();
    }
    await recordAction(trx, actor, {
      activityType: existing ? 'draftEdited' : 'draftCreated',
      objectType: 'draft',
      objectId: id,
      at: now,
    });
    return {
      id,
      _version: existing ? (options.version ?? existing.version) + 1 : 1,
      data: stored,
      createDate: existing?.created_at ?? now.toISOString(),
      modifyDate: now.toISOString(),
    };
  });
}

/** GET /drafts/:id: the caller's own draft. */
export async function getDraft(deps: Deps, actor: Actor, id: string): Promise<DraftView> {
  const row = await deps.db
    .selectFrom('drafts')
    .selectAll()
    .where('id', '=', id)
    .where('tenant_id', '=', actor.tenantId)
    .where('owner_id', '=', actor.userId)
    .executeTakeFirst();
  if (!row) throw new NotFound('No such draft');
  return {
    id: row.id,
    _version: row.version,
    data: readJson<DraftData>(row.data, {}),
    createDate: row.created_at,
    modifyDate: row.updated_at,
  };
}
