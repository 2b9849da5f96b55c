import type { Kysely } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { LimitExceeded } from '../core/errors.js';
import type { Database } from '../store/db/schema.js';
import { canManage, canView, type DocumentRow } from '../core/access/document-access.js';
import { changeDocument } from '../core/changes/change-document.js';
import { writeTransaction } from '../store/db/dialect.js';

export interface DeleteResult {
  /** True when anything asked for was not deleted (spec Errors 4). */
  errors: boolean;
  /** Documents and folders deleted, nested ones included. */
  count: number;
  /** What was not deleted, and why. */
  items: { id: string; title?: string; error: string }[];
}

const BULK_LIMIT = 100;
const MAX_DEPTH = 64;

/**
 * DELETE /documents (spec Documents rule 5): soft by default, permanent with `hardDelete`. A folder
 * takes its nested folders and documents with it; each needs edit permission. What cannot be deleted
 * is listed in `items`, and the folders holding it stay (they are not empty), while the rest goes.
 */
export async function deleteDocuments(
  deps: Deps,
  actor: Actor,
  options: { ids: string[]; hardDelete: boolean },
): Promise<DeleteResult> {
  if (options.ids.length > BULK_LIMIT) throw new LimitExceeded(`At most ${BULK_LIMIT} documents per request`);
  const now = deps.clock.now();
  return writeTransaction(deps.db, deps.dialect, async (trx) => {
    const result: DeleteResult = { errors: false, count: 0, items: [] };
    for (const id of new Set(options.ids)) {
      const doc = await trx.selectFrom('documents').selectAll().where('id', '=', id).executeTakeFirst();
      if (!doc || !(await canView(trx, actor, doc))) {
        result.items.push({ id, error: 'not found' });
        continue;
      }
      await deleteTree(trx, actor, doc, options.hardDelete, now, result, 0);
    }
    result.errors = result.items.length > 0;
    return result;
  });
}

/** Deletes children first; returns whether `doc` itself was deleted. */
async function deleteTree(
  trx: Kysely<Database>,
  actor: Actor,
  doc: DocumentRow,
  hard: boolean,
  now: Date,
  result: DeleteResult,
  depth: number,
): Promise<boolean> {
  let blocked = false;
  if (doc.kind === 'folder' && depth < MAX_DEPTH) {
    const children = await trx
      .selectFrom('documents')
      .selectAll()
      .where('folder_id', '=', doc.id)
      .where('deleted_at', 'is', null)
      .execute();
    for (const child of children) {
      if (!(await deleteTree(trx, actor, child, hard, now, result, depth + 1))) blocked = true;
    }
  }
  if (!canManage(actor, doc)) {
    result.items.push({ id: doc.id, title: doc.title, error: 'no edit permission' });
    return false;
  }
  if (blocked) {
    result.items.push({
      id: doc.id,
      title: doc.title,
      error: 'folder not empty: some of its content could not be deleted',
    });
    return false;
  }
  await changeDocument(trx, actor, {
    doc,
    expectedVersion: doc.version,
    set: { deleted_at: now.toISOString() },
    activityType: hard ? 'documentHardDeleted' : 'documentDeleted',
    event: doc.kind === 'document' ? 'documentDeleted' : undefined,
    now,
  });
  if (hard) {
    await trx.deleteFrom('document_attachments').where('document_id', '=', doc.id).execute();
    await trx.deleteFrom('document_revisions').where('document_id', '=', doc.id).execute();
    await trx.deleteFrom('documents').where('id', '=', doc.id).execute();
  }
  result.count += 1;
  return true;
}
