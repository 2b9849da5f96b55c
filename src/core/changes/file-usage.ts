import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../access/actor.js';
import { FileNotUsable } from '../../base/errors.js';
import type { Database } from '../../store/db/schema.js';
import type { FileRecord } from '../../store/files/file-store.js';

/** Where a file id may come from, by upload endpoint (spec Files, usage rules 1 and 2). */
export const FROM_SAVE_FILE = ['saveFile'] as const;
export const FROM_PHOTO = ['photo'] as const;

const ENDPOINT: Record<string, string> = {
  saveFile: 'POST /files/saveFile',
  photo: 'POST /files/photo',
  signature: 'POST /files/signature',
  initials: 'POST /files/initials',
};

export interface FileUse {
  fileId: string;
  /** The request field, named in the error (`body.pdfFile.content`, `body.file[1].content`). */
  field: string;
  /** Upload kinds the field accepts. */
  kinds: readonly string[];
  /** A clone flag is set: the record gets a copy and the original stays as it is. */
  clone?: boolean;
}

/**
 * Applies the usage rules to the files a request uses and claims them for `usedBy`, inside the
 * caller's transaction. Each id is used once (rules 4, 5, 7, 8): claiming is a compare-and-set on
 * `used_by`, so two requests racing for one id cannot both win. Draft use never claims (rules 6-8:
 * "unused or used only in a draft"). The same id several times in one request is one use (rule 3).
 * With a clone flag the record gets a new id over the same bytes. Returns field → the id to store.
 */
export async function claimFiles(
  trx: Kysely<Database>,
  actor: Actor,
  uses: FileUse[],
  usedBy: string,
  now: Date,
): Promise<Map<string, FileRecord>> {
  const result = new Map<string, FileRecord>();
  const claimed = new Map<string, FileRecord>();
  for (const use of uses) {
    const file = await loadOwnFile(trx, actor, use);
    if (use.clone) {
      result.set(use.field, await copyFile(trx, file, usedBy, now));
      continue;
    }
    const already = claimed.get(file.id);
    if (already) {
      result.set(use.field, already);
      continue;
    }
    const update = await trx
      .updateTable('files')
      .set({ used_by: usedBy, used_at: now.toISOString() })
      .where('id', '=', file.id)
      .where('used_by', 'is', null)
      .executeTakeFirst();
    if (update.numUpdatedRows === 0n) {
      throw new FileNotUsable(
        `${use.field}: the file is already used; upload it again or set the clone flag`,
      );
    }
    const claimedFile = { ...file, used_by: usedBy, used_at: now.toISOString() };
    claimed.set(file.id, claimedFile);
    result.set(use.field, claimedFile);
  }
  return result;
}

/** The caller's own upload from one of the accepted endpoints (rules 1 and 2). */
async function loadOwnFile(trx: Kysely<Database>, actor: Actor, use: FileUse): Promise<FileRecord> {
  const file = await trx
    .selectFrom('files')
    .selectAll()
    .where('id', '=', use.fileId)
    .where('tenant_id', '=', actor.tenantId)
    .executeTakeFirst();
  // Another user's upload is as good as unknown: ids are not shared between accounts.
  if (!file || file.owner_id !== actor.userId)
    throw new FileNotUsable(`${use.field}: no such file among your uploads`);
  if (!use.kinds.includes(file.kind)) {
    const from = use.kinds.map((k) => ENDPOINT[k] ?? k).join(' or ');
    throw new FileNotUsable(`${use.field}: the file must be uploaded with ${from}`);
  }
  return file;
}

/** A new id over the same bytes (the clone flags of the usage rules). */
async function copyFile(
  trx: Kysely<Database>,
  file: FileRecord,
  usedBy: string | null,
  now: Date,
): Promise<FileRecord> {
  const copy: FileRecord = {
    ...file,
    id: randomBytes(16).toString('hex'),
    created_at: now.toISOString(),
    used_by: usedBy,
    used_at: usedBy ? now.toISOString() : null,
  };
  await trx.insertInto('files').values(copy).execute();
  return copy;
}

/**
 * Checks the files a draft refers to without claiming them (rule 6: drafts hold files, documents use
 * them): the caller's own, from the right endpoint, not used elsewhere. With a clone flag the draft
 * gets an unused copy, which a document made from the draft may then use.
 */
export async function checkDraftFiles(
  trx: Kysely<Database>,
  actor: Actor,
  uses: FileUse[],
  now: Date,
): Promise<Map<string, FileRecord>> {
  const result = new Map<string, FileRecord>();
  for (const use of uses) {
    const file = await loadOwnFile(trx, actor, use);
    if (use.clone) result.set(use.field, await copyFile(trx, file, null, now));
    else if (file.used_by !== null) {
      throw new FileNotUsable(
        `${use.field}: the file is already used; upload it again or set the clone flag`,
      );
    } else result.set(use.field, file);
  }
  return result;
}

/** `claimFiles` for one use: the file claimed for `usedBy`, the usage rules applied. */
export async function claimFile(
  trx: Kysely<Database>,
  actor: Actor,
  use: FileUse,
  usedBy: string,
  now: Date,
): Promise<FileRecord> {
  const file = (await claimFiles(trx, actor, [use], usedBy, now)).get(use.field);
  if (!file) throw new Error('unreachable: claimFiles answers every use');
  return file;
}
