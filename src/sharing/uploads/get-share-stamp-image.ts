import type { Deps } from '../../core/deps.js';
import { canManage } from '../../core/access/document-access.js';
import { loadCallerShare } from '../../core/sharing/recipient.js';
import { type RecipientCaller } from '../../core/access/recipient-caller.js';
import type { FileRecord } from '../../store/files/file-store.js';
import { loadUsableStamp } from '../../core/stamps/load-usable-stamp.js';

/**
 * GET /share/stamp/:id (spec Files: "the stamp image"): a stamp uploaded through a share, to that
 * share's recipient and to whoever may change the document (its owner, its organization's
 * administrators), who sees what was stamped on it. Internal users also reach the stamps they may use.
 * Anyone else gets "not found".
 */
export async function getShareStampImage(
  deps: Deps,
  caller: RecipientCaller,
  id: string,
): Promise<FileRecord> {
  if (caller.kind === 'external') {
    // A locked share reads nothing (403 MFA_REQUIRED) until POST /share/unlock.
    await loadCallerShare(deps, caller);
    return (await loadUsableStamp(deps, caller, id)).file;
  }
  const { actor } = caller;
  const stamp = await deps.db
    .selectFrom('stamps as s')
    .innerJoin('shares as sh', 'sh.id', 's.share_id')
    .innerJoin('documents as d', 'd.id', 'sh.document_id')
    .selectAll('d')
    .select('s.file_id as stampFileId')
    .where('s.id', '=', id)
    .where('s.tenant_id', '=', actor.tenantId)
    .where('s.scope', '=', 'share')
    .executeTakeFirst();
  if (stamp) {
    const { stampFileId, ...doc } = stamp;
    if (canManage(actor, doc)) {
      const file = await deps.files.find(actor.tenantId, stampFileId);
      if (file) return file;
    }
  }
  return (await loadUsableStamp(deps, actor, id)).file;
}
