import type { Actor } from '../access/actor.js';
import type { Deps } from '../deps.js';
import { FileNotUsable, MfaRequired, NotFound } from '../../base/errors.js';
import type { Recipient, RecipientCaller } from '../access/recipient-caller.js';
import type { FileRecord } from '../../store/files/file-store.js';
import { findInTenant } from '../../store/db/rows.js';
import { mayUseStamp, type StampRow } from './stamp-access.js';

/** Who signs with a stamp: a user, an external recipient, or either as a recipient route's caller. */
export type StampUser = Actor | Recipient | RecipientCaller;

export interface UsableStamp {
  stamp: StampRow;
  /** The image to draw. */
  file: FileRecord;
}

function callerOf(user: StampUser): RecipientCaller {
  if ('kind' in user) return user;
  if ('shareId' in user) return { kind: 'external', recipient: user };
  return { kind: 'internal', actor: user };
}

/**
 * The stamp a signature entry of type `stamp` names by id in its `blob` (spec Signature entry;
 * Versioning 4: ID-based stamps), with its image, when the signer may use it: a user their personal
 * stamps, their organization's stamps (team stamps) and the stamps of their own shares; an external
 * recipient only the stamps uploaded through their share (spec Files usage rule 2: external stamps
 * via POST /share/upload/stamp). A stamp may be used any number of times.
 *
 * Anything else is "not found"; with `field` (the request field, e.g. `signatures[0].blob`) it is
 * 400 FILE_NOT_USABLE instead, as for any other signing image of the wrong origin.
 *
 * ```ts
 * const { stamp, file } = await loadUsableStamp(deps, caller, entry.blob, `signatures[${i}].blob`);
 * const image = await deps.files.read(file);
 * ```
 */
export async function loadUsableStamp(
  deps: Deps,
  user: StampUser,
  stampId: string,
  field?: string,
): Promise<UsableStamp> {
  const caller = callerOf(user);
  const missing = () =>
    field
      ? new FileNotUsable(`${field}: no such stamp among the stamps you may use`)
      : new NotFound('No such stamp');
  const tenantId = caller.kind === 'external' ? caller.recipient.tenantId : caller.actor.tenantId;
  const stamp = await findInTenant(deps.db, 'stamps', tenantId, stampId);
  if (!stamp) throw missing();
  if (caller.kind === 'external') {
    if (!caller.recipient.unlocked)
      throw new MfaRequired('This share is protected: unlock it with POST /share/unlock');
    if (stamp.scope !== 'share' || stamp.share_id !== caller.recipient.shareId) throw missing();
  } else if (!mayUseStamp(caller.actor, stamp) && !(await isOwnShareStamp(deps, caller.actor, stamp))) {
    throw missing();
  }
  const file = await deps.files.find(tenantId, stamp.file_id);
  if (!file) throw missing();
  return { stamp, file };
}

/** An internal recipient who uploaded a stamp through their share with their session uses it like an external one. */
async function isOwnShareStamp(deps: Deps, actor: Actor, stamp: StampRow): Promise<boolean> {
  if (stamp.scope !== 'share' || !stamp.share_id) return false;
  const share = await deps.db
    .selectFrom('shares')
    .select('id')
    .where('id', '=', stamp.share_id)
    .where('user_id', '=', actor.userId)
    .executeTakeFirst();
  return share !== undefined;
}
