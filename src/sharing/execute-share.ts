import type { Static } from 'typebox';
import type { ExecuteShareBody } from './contract.js';
import type { Deps } from '../core/deps.js';
import { Forbidden, ValidationError } from '../base/errors.js';
import { drawsAnything } from '../core/signing/visual-input.js';
import { onCallerShare } from '../core/sharing/recipient.js';
import { type RecipientCaller } from '../core/access/recipient-caller.js';
import {
  assertShareCanAct,
  assertSimpleAction,
  recordSimpleAction,
} from '../core/sharing/recipient-actions.js';
import type { ShareRow } from '../core/sharing/share-types.js';
import { loadDocumentForUpdate } from '../core/sharing/workflow.js';
import { writeTransaction } from '../store/db/dialect.js';
import { recipientSigner, signDocument, type SignOutcome } from '../core/signing/sign-document.js';
import { commitDrawn, drawAndCommit, signingOutcome } from '../core/signing/signer-change.js';

/** `{status}`, and how the signature came out when the call signed (as the sign calls answer). */
export type ActionOutcome = { status: 'SUCCESS' } & Partial<Omit<SignOutcome, 'status'>>;

/**
 * POST /share/execute `{id, action?, comment?, signatures?, images?, annotations?, level?}` (spec Files
 * usage rule 3 lists it among the calls carrying `signatures` and `images`): the recipient executes the
 * action their share owes. A sign share is executed by signing: `signatures` are required and the call
 * is PUT /share/document/sign/{version} (or PUT /documents/sign/{version} for a user) on the current
 * version. An approve, review, accept or execute share records its action; with `signatures` the
 * recipient's visuals are first drawn and closed by a PAdES signature in their name (`documentSigned`,
 * then `documentSimpleActionExecuted`), with `images` or `annotations` alone drawn as an annotate.
 */
export const executeShare = onCallerShare<Static<typeof ExecuteShareBody>, ActionOutcome>(executeOwnShare);

/** `executeShare` on a share already found (POST /inbox/action names it). */
export async function executeOwnShare(
  deps: Deps,
  caller: RecipientCaller,
  share: ShareRow,
  options: Omit<Static<typeof ExecuteShareBody>, 'id'>,
): Promise<ActionOutcome> {
  const now = deps.clock.now();
  if (share.purpose === 'sign') {
    assertShareCanAct(share, now);
    if (options.action && options.action !== 'sign')
      throw new Forbidden(`This share allows sign, not ${options.action}`);
    if (!options.signatures?.length)
      throw new ValidationError('signatures', 'is required: a sign share is executed by signing');
    const doc = await loadDocumentForUpdate(deps.db, share.document_id);
    return signDocument(
      deps,
      caller.kind === 'external'
        ? { kind: 'share', recipient: caller.recipient }
        : { kind: 'user', actor: caller.actor, shareId: share.id },
      {
        id: share.document_id,
        version: doc.version,
        signatures: options.signatures,
        images: options.images,
        annotations: options.annotations,
        level: options.level,
      },
    );
  }
  await assertSimpleAction(deps.db, share, options.action, now);
  if (!drawsAnything(options)) {
    await writeTransaction(deps.db, deps.dialect, (trx) =>
      recordSimpleAction(trx, deps, { share, caller, now, comment: options.comment }),
    );
    return { status: 'SUCCESS' };
  }
  const signer = await recipientSigner(deps, caller, share);
  const { signature, shareStateName } = await drawAndCommit(
    deps,
    signer,
    {
      request: { signatures: options.signatures, images: options.images, annotations: options.annotations },
      level: options.level,
      sign: Boolean(options.signatures?.length),
    },
    async (trx, drawn, at, sealOnComplete) => {
      await commitDrawn(trx, deps, signer, drawn, at);
      // One call, one change: the action is recorded on the version the drawing made.
      return recordSimpleAction(trx, deps, {
        share,
        caller,
        now: at,
        comment: options.comment,
        bumpVersion: false,
        sealOnComplete,
      });
    },
  );
  return { status: 'SUCCESS', ...(signature ? signingOutcome(signature) : {}), shareStateName };
}
