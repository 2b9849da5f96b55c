import type { Kysely, Updateable } from 'kysely';
import type { Actor } from '../access/actor.js';
import { recordAction } from '../audit/record.js';
import { VersionMismatch } from '../../base/errors.js';
import type { Database, DocumentTable } from '../../store/db/schema.js';
import { emitEvent, type EventName } from '../events/emit-event.js';
import type { DocumentRow } from '../access/document-access.js';

/** Who changes a document: a user, or an external recipient acting through a share link. */
export type DocumentChanger = Pick<Actor, 'tenantId' | 'name' | 'requestId'>;

/**
 * The one way a document changes (DESIGN Storage): a compare-and-set on `_version` in the caller's
 * transaction, with its audit record and event. A stale version is 409 VERSION_MISMATCH; of two
 * concurrent changes to one version exactly one succeeds.
 */
export async function changeDocument(
  trx: Kysely<Database>,
  actor: DocumentChanger,
  options: {
    doc: DocumentRow;
    expectedVersion: number;
    set: Updateable<DocumentTable>;
    activityType: string;
    event?: EventName;
    data?: Record<string, unknown>;
    now: Date;
    /**
     * False when this is the second part of one request whose first part already counted as the
     * change (a document created, or edited, and signed in one call): the version is still checked
     * but stays as it is.
     */
    bumpVersion?: boolean | undefined;
  },
): Promise<DocumentRow> {
  const { doc, expectedVersion, now } = options;
  const version = options.bumpVersion === false ? expectedVersion : expectedVersion + 1;
  const updated = await trx
    .updateTable('documents')
    .set({ ...options.set, version, updated_at: now.toISOString() })
    .where('id', '=', doc.id)
    .where('version', '=', expectedVersion)
    .returningAll()
    .executeTakeFirst();
  if (!updated) throw new VersionMismatch();
  await recordAction(trx, actor, {
    activityType: options.activityType,
    objectType: doc.kind,
    objectId: doc.id,
    data: { version: updated.version, ...options.data },
    at: now,
  });
  if (options.event) {
    await emitEvent(trx, {
      tenantId: doc.tenant_id,
      organizationId: doc.organization_id,
      documentId: doc.id,
      event: options.event,
      actor: actor.name,
      at: now,
      requestId: actor.requestId,
    });
  }
  return updated;
}

/** Records a new main file as the next revision (every version of the main file is kept). */
export async function addRevision(
  trx: Kysely<Database>,
  options: { documentId: string; fileId: string; reason: string; actor: string; now: Date },
): Promise<number> {
  const last = await trx
    .selectFrom('document_revisions')
    .select((eb) => eb.fn.max<number>('revision').as('n'))
    .where('document_id', '=', options.documentId)
    .executeTakeFirst();
  const revision = Number(last?.n ?? 0) + 1;
  await trx
    .insertInto('document_revisions')
    .values({
      document_id: options.documentId,
      revision,
      file_id: options.fileId,
      reason: options.reason,
      actor_id: options.actor,
      created_at: options.now.toISOString(),
    })
    .execute();
  return revision;
}
