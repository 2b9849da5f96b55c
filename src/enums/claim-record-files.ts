import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { NewRecord } from './contract.js';
import type { Actor } from '../core/access/actor.js';
import { claimFile, FROM_PHOTO, FROM_SAVE_FILE, type FileUse } from '../core/changes/file-usage.js';
import type { Database } from '../store/db/schema.js';
import type { EnumRecord } from '../core/access/enum-access.js';

export type RecordInput = Static<typeof NewRecord>;

/**
 * Claims the files of enum records for the enum (spec Files usage rule 1): a `photo` must be an
 * unused POST /files/photo upload, every other file an unused POST /files/saveFile upload, each id
 * used once. Each use is claimed on its own, so one id given twice, even in two records of one
 * request, is a reuse and fails. `kept` is the record being replaced: its photo sent again as the
 * photo, or its files again as files, are kept rather than reused.
 *
 * `prefix` names the record in errors (`records[2].` on create, `` on PUT /enums/:name/record).
 */
export async function claimRecordFiles(
  trx: Kysely<Database>,
  actor: Actor,
  options: {
    enumId: string;
    records: RecordInput[];
    prefix: (index: number) => string;
    kept?: EnumRecord | undefined;
  },
  now: Date,
): Promise<EnumRecord[]> {
  const keptPhoto = options.kept?.photo ?? null;
  const keptFiles = new Set(options.kept?.files ?? []);
  const claim = async (use: FileUse, kept: boolean): Promise<string> => {
    if (kept) return use.fileId;
    return (await claimFile(trx, actor, use, `enum:${options.enumId}`, now)).id;
  };
  const records: EnumRecord[] = [];
  for (const [i, input] of options.records.entries()) {
    const prefix = options.prefix(i);
    const photo =
      input.photo === undefined
        ? null
        : await claim(
            { fileId: input.photo, field: `${prefix}photo`, kinds: FROM_PHOTO },
            input.photo === keptPhoto,
          );
    const files: string[] = [];
    for (const [j, fileId] of (input.files ?? []).entries()) {
      // The schema refuses an id twice in one `files`, so a kept file is kept once.
      const use = { fileId, field: `${prefix}files[${j}]`, kinds: FROM_SAVE_FILE };
      files.push(await claim(use, keptFiles.has(fileId)));
    }
    records.push({ value: input.value, label: input.label, photo, files });
  }
  return records;
}
