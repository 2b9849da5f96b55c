import type { Kysely } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { LimitExceeded } from '../base/errors.js';
import type { Database } from '../store/db/schema.js';
import { canManage, canView, type DocumentRow } from '../core/access/document-access.js';
import { recordAction } from '../core/audit/record.js';
import { changeDocument } from '../core/changes/change-document.js';
import { eraseDocument } from '../core/documents/erase-document.js';
import { emitEvent } from '../core/events/emit-event.js';
import { queueBytesRemoval, removeBytes, type BytesRemovalPayload } from '../core/files/bytes-removal.js';
import type { ReleasedFile } from '../core/files/file-references.js';
import { endDocumentShares } from '../core/sharing/end-document-shares.js';
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
 *
 * DESIGN: a soft delete ends the document's shares (and their links); a hard delete removes its rows,
 * revisions, attachments, shares and the file records only it used at once, then their bytes once no
 * file has them. A soft-deleted document can be hard-deleted later by who manages it.
 */
export async function deleteDocuments(
  deps: Deps,
  actor: Actor,
  options: { ids: string[]; hardDelete: boolean },
): Promise<DeleteResult> {
  if (options.ids.length > BULK_LIMIT) throw new LimitExceeded(`At most ${BULK_LIMIT} documents per request`);
  const now = deps.clock.now();
  const released: ReleasedFile[] = [];
  let removal: BytesRemovalPayload | undefined;
  const result = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    released.length = 0;
    const result: DeleteResult = { errors: false, count: 0, items: [] };
    for (const id of new Set(options.ids)) {
      const doc = await trx.selectFrom('documents').selectAll().where('id', '=', id).executeTakeFirst();
      if (!doc || !(await addressable(trx, actor, doc, options.hardDelete))) {
        result.items.push({ id, error: 'not found' });
        continue;
      }
      await deleteTree(trx, actor, doc, { hard: options.hardDelete, now, result, released }, 0);
    }
    result.errors = result.items.length > 0;
    removal = await queueBytesRemoval(trx, { released, writtenBefore: now, now, requestId: actor.requestId });
    return result;
  });
  // The bytes go at once, after commit (a rollback must never lose bytes). What fails here is the
  // queued job's to retry: the deletion has committed, and its answer says so.
  if (removal) await removeBytes(deps, removal).catch(() => undefined);
  return result;
}

/**
 * Whether the caller may address `doc` for deletion: a document they see; a soft-deleted one, which
 * nobody sees any more, only for a hard delete by who manages it (anyone else: "not found").
 */
async function addressable(
  trx: Kysely<Database>,
  actor: Actor,
  doc: DocumentRow,
  hard: boolean,
): Promise<boolean> {
  if (doc.deleted_at === null) return canView(trx, actor, doc);
  return hard && canManage(actor, doc);
}

interface Deletion {
  hard: boolean;
  now: Date;
  result: DeleteResult;
  /** File records a hard delete removed: their bytes go after commit. */
  released: ReleasedFile[];
}

/** Deletes children first; returns whether `doc` itself was deleted. */
async function deleteTree(
  trx: Kysely<Database>,
  actor: Actor,
  doc: DocumentRow,
  deletion: Deletion,
  depth: number,
): Promise<boolean> {
  const { hard, now, result } = deletion;
  let blocked = false;
  if (doc.kind === 'folder' && depth < MAX_DEPTH) {
    // A hard delete takes soft-deleted content too: nothing of the folder may stay behind.
    const children = await trx
      .selectFrom('documents')
      .selectAll()
      .where('folder_id', '=', doc.id)
      .$if(!hard, (q) => q.where('deleted_at', 'is', null))
      .execute();
    for (const child of children) {
      if (!(await deleteTree(trx, actor, child, deletion, depth + 1))) blocked = true;
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
  const wasDeleted = doc.deleted_at !== null;
  const ended = wasDeleted ? doc : await endDocumentShares(trx, { doc, by: actor, now });
  if (!hard) {
    await changeDocument(trx, actor, {
      doc: ended,
      expectedVersion: ended.version,
      set: { deleted_at: now.toISOString() },
      activityType: 'documentDeleted',
      event: doc.kind === 'document' ? 'documentDeleted' : undefined,
      now,
    });
  } else {
    const erased = await eraseDocument(trx, ended);
    deletion.released.push(...erased);
    // Ids and hashes only (DESIGN: the audit chain keeps event hashes and ids, never contents).
    await recordAction(trx, actor, {
      activityType: 'documentHardDeleted',
      objectType: doc.kind,
      objectId: doc.id,
      data: { version: ended.version, files: erased.map((file) => ({ id: file.id, sha256: file.sha256 })) },
      at: now,
    });
    // A soft-deleted document's deletion was told already.
    if (doc.kind === 'document' && !wasDeleted) {
      await emitEvent(trx, {
        tenantId: doc.tenant_id,
        organizationId: doc.organization_id,
        documentId: doc.id,
        event: 'documentDeleted',
        actor: actor.name,
        at: now,
        requestId: actor.requestId,
      });
    }
  }
  result.count += 1;
  return true;
}
