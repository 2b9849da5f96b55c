import type { Static } from 'typebox';
import type { TransferOwnerBody } from './contract.js';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { Forbidden, ValidationError } from '../base/errors.js';
import { getProperties } from '../core/settings/tenant-settings.js';
import { loadManageable } from '../core/access/document-access.js';
import { changeDocument } from '../core/changes/change-document.js';
import { documentView, type DocumentView } from '../core/views/document-view.js';
import { writeTransaction } from '../store/db/dialect.js';

/**
 * PUT /documents/owner (spec Versioning 4): moves ownership to another user of the tenant when the
 * tenant enables it (`ownerTransferEnabled`). The owner holds the extra actions (reminders).
 */
export async function transferOwner(
  deps: Deps,
  actor: Actor,
  options: Static<typeof TransferOwnerBody>,
): Promise<DocumentView> {
  if (!(await getProperties(deps, actor)).ownerTransferEnabled) {
    throw new Forbidden('Owner transfer is not enabled for this tenant (setting ownerTransferEnabled)');
  }
  const doc = await loadManageable(deps.db, actor, options.id);
  const target = await deps.db
    .selectFrom('users')
    .select(['id', 'name', 'status'])
    .where('tenant_id', '=', actor.tenantId)
    .where((eb) => eb.or([eb('id', '=', options.owner), eb('name', '=', options.owner.toLowerCase())]))
    .executeTakeFirst();
  if (!target || target.status !== 'active') {
    throw new ValidationError('owner', 'must name an active user');
  }
  const now = deps.clock.now();
  const updated = await writeTransaction(deps.db, deps.dialect, (trx) =>
    changeDocument(trx, actor, {
      doc,
      expectedVersion: options.version ?? doc.version,
      set: { owner_id: target.id },
      activityType: 'ownerTransferred',
      event: 'documentEdited',
      data: { from: doc.owner_id, to: target.id },
      now,
    }),
  );
  return documentView(deps.db, actor, updated);
}
