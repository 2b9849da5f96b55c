import type { Static } from 'typebox';
import type { RejectShareBody } from './contract.js';
import type { Deps } from '../core/deps.js';
import { Forbidden } from '../base/errors.js';
import { drawsAnything } from '../core/signing/visual-input.js';
import { onCallerShare } from '../core/sharing/recipient.js';
import { type RecipientCaller } from '../core/access/recipient-caller.js';
import { assertShareCanAct, recordRejection } from '../core/sharing/recipient-actions.js';
import { shareOptions, type ShareRow } from '../core/sharing/share-types.js';
import { writeTransaction } from '../store/db/dialect.js';
import { recipientSigner } from '../core/signing/sign-document.js';
import { commitDrawn, drawAndCommit } from '../core/signing/signer-change.js';

/**
 * PUT /share/reject `{id, reason?, signatures?, images?, annotations?}` (Contract; spec Files usage rule
 * 3 lists it among the calls carrying `signatures` and `images`): the recipient refuses, the document
 * becomes `rejected`, the other pending shares end and `signRejected` is sent. With the share right
 * `canAnnotateOnReject` (spec Share `rights`) the recipient first draws their notes on the document,
 * as annotations in an incremental update (`documentAnnotated`, event `documentEdited`); a rejection
 * signs nothing, so `signatures` entries are drawn without a digital signature. Without that right such
 * content is 403 and nothing is written.
 */
export const rejectShare = onCallerShare<Static<typeof RejectShareBody>, void>(rejectOwnShare);

/** `rejectShare` on a share already found (POST /inbox/action names it). */
export async function rejectOwnShare(
  deps: Deps,
  caller: RecipientCaller,
  share: ShareRow,
  options: Omit<Static<typeof RejectShareBody>, 'id'>,
): Promise<void> {
  const now = deps.clock.now();
  assertShareCanAct(share, now);
  if (!drawsAnything(options)) {
    await writeTransaction(deps.db, deps.dialect, (trx) =>
      recordRejection(trx, { share, caller, now, reason: options.reason }),
    );
    return;
  }
  if (!shareOptions(share).rights.includes('canAnnotateOnReject')) {
    throw new Forbidden(
      'Drawing on the document when rejecting ("signatures", "images", "annotations") needs the share right canAnnotateOnReject',
    );
  }
  const signer = await recipientSigner(deps, caller, share);
  await drawAndCommit(
    deps,
    signer,
    { request: { signatures: options.signatures, images: options.images, annotations: options.annotations } },
    async (trx, drawn, at) => {
      await commitDrawn(trx, deps, signer, drawn, at);
      // One call, one change: the rejection is recorded on the version the notes made.
      return recordRejection(trx, { share, caller, now: at, reason: options.reason, bumpVersion: false });
    },
  );
}
