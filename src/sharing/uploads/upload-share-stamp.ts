import { randomUUID } from 'node:crypto';
import { record } from '../../core/audit/record.js';
import type { Deps } from '../../core/deps.js';
import { FileNotUsable, ValidationError } from '../../base/errors.js';
import { callerName, callerRequestId, type RecipientCaller } from '../../core/access/recipient-caller.js';
import type { StampRow } from '../../core/stamps/stamp-access.js';
import { assertStampImage } from '../../core/stamps/stamp-image.js';
import { receiveShareUpload, type ReadUpload } from './share-upload.js';
import { writeTransaction } from '../../store/db/dialect.js';

/** The longest `name` a recipient may give a stamp (documented in the route). */
export const MAX_STAMP_NAME = 200;

function assertName(name: string | undefined): void {
  if (name !== undefined && (name.length === 0 || name.length > MAX_STAMP_NAME)) {
    throw new ValidationError('name', `length must be between 1 and ${MAX_STAMP_NAME} characters`);
  }
}

/**
 * POST /share/upload/stamp (spec Files usage rule 2: external stamps; Versioning 4: it returns a
 * stamp ID): the recipient's stamp image becomes a stamp owned by their share, which a signature
 * entry of type `stamp` names by that id. The image is claimed by the stamp, so it serves nowhere else.
 */
export async function uploadShareStamp(
  deps: Deps,
  caller: RecipientCaller,
  read: ReadUpload,
): Promise<{ id: string }> {
  const { upload, fields } = await receiveShareUpload(
    deps,
    caller,
    read,
    'share-stamp',
    (_share, fieldsSoFar) => assertName(fieldsSoFar.name),
  );
  assertName(fields.name);
  await assertStampImage(deps, upload.record, 'file');
  const now = deps.clock.now();
  const id = randomUUID();
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const claimed = await trx
      .updateTable('files')
      .set({ used_by: `stamp:${id}`, used_at: now.toISOString() })
      .where('id', '=', upload.record.id)
      .where('used_by', 'is', null)
      .executeTakeFirst();
    if (claimed.numUpdatedRows === 0n) throw new FileNotUsable('file: the file is already used');
    const stamp: StampRow = {
      id,
      tenant_id: upload.doc.tenant_id,
      organization_id: upload.doc.organization_id,
      owner_id: null,
      share_id: upload.share.id,
      scope: 'share',
      name: fields.name ?? upload.record.name,
      file_id: upload.record.id,
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
      version: 1,
    };
    await trx.insertInto('stamps').values(stamp).execute();
    await record(trx, {
      tenantId: stamp.tenant_id,
      actorId: callerName(caller),
      activityType: 'stampCreated',
      objectType: 'stamp',
      objectId: id,
      requestId: callerRequestId(caller),
      data: { scope: 'share', shareId: upload.share.id, documentId: upload.doc.id, file: upload.record.id },
      at: now,
    });
  });
  return { id };
}
