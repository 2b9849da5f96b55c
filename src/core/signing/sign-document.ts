import type { Static } from 'typebox';
import type { SignBody } from './sign-contract.js';
import type { Actor } from '../access/actor.js';
import type { Deps } from '../deps.js';
import { assertSignatureProvider } from './signature-provider.js';
import { canEdit, loadVisible } from '../access/document-access.js';
import { Forbidden, NotFound, ValidationError, VersionMismatch } from '../../base/errors.js';
import type { Recipient, RecipientCaller } from '../access/recipient-caller.js';
import { assertShareCanAct } from '../sharing/recipient-actions.js';
import { assertRequiredFilesSubmitted } from '../sharing/share-fields.js';
import type { ShareRow } from '../sharing/share-types.js';
import { loadDocumentForUpdate } from '../sharing/workflow.js';
import { userSignerName } from './seal.js';
import {
  commitSignature,
  drawAndCommit,
  signingOutcome,
  type Signer,
  type SigningOutcome,
} from './signer-change.js';

/**
 * Who signs: a user (for their share `shareId` when they act on one, else the share of theirs the
 * document awaits, or as who may edit it), or an external recipient through their share.
 */
export type Signing =
  { kind: 'user'; actor: Actor; shareId?: string | undefined } | { kind: 'share'; recipient: Recipient };

export interface SignOutcome extends SigningOutcome {
  status: 'SUCCESS';
  /** The document's share state after this call (`completed` when this was the last signature). */
  shareStateName: string | null;
}

/**
 * PUT /documents/sign/:version, and PUT /share/document/sign/:version for external recipients (spec
 * Documents; DESIGN lessons), which POST /share/execute and POST /inbox/action are on a sign share: each signature entry is drawn as an annotation in the signer's own
 * revision, closed by a PAdES signature made with the organisation key in the signer's name, as an
 * incremental update. The main file gets a new id and the old one stays a revision. A recipient's
 * signature completes their share; the last one completes the document, which is then sealed when
 * `sealOnComplete` is on (Contract).
 *
 * DESIGN: remote calls never run inside a database transaction. The file is drawn and signed first
 * (the TSA answers meanwhile, while other writers go on), reading only; then one short transaction
 * checks `_version`, claims the image files and commits. A request that lost the race to another
 * change of the same version gets 409 and its signed file is discarded (its bytes are swept).
 */
export async function signDocument(
  deps: Deps,
  signing: Signing,
  options: Static<typeof SignBody> & { version: number },
): Promise<SignOutcome> {
  const provider = await assertSignatureProvider(deps, options.signatureProvider);
  const signer = await authorizeSigning(deps, signing, options.id);
  if (signer.doc.version !== options.version) throw new VersionMismatch();
  const { signature, shareStateName } = await drawAndCommit(
    deps,
    signer,
    {
      request: { signatures: options.signatures, images: options.images, annotations: options.annotations },
      level: options.level,
      sign: true,
      provider,
      // A recipient's answers to their share's fields, checked, and its read-only fields (predefined
      // texts, imported custom fields) are written with their signature (spec Signature field; Custom field).
      shareFieldTexts: true,
    },
    (trx, drawn, now, sealOnComplete) =>
      commitSignature(trx, deps, {
        doc: signer.doc,
        share: signer.share,
        by: signer.by,
        previous: drawn.previous,
        bytes: drawn.pdf,
        expectedVersion: options.version,
        data: { levelAchieved: drawn.signature.levelAchieved, fellBack: drawn.signature.fellBack },
        archive: drawn.signature.archive,
        sealOnComplete,
        now,
      }),
  );
  return { status: 'SUCCESS', ...signingOutcome(signature), shareStateName };
}

/**
 * Who may sign the document, and for which share: an external recipient their sign share, whose turn
 * it is; a user their sign share (the one named, else the first the document awaits), or, with no
 * share, when they may edit the document (its owner, an administrator, a user it is shared with for
 * edit). Unseen is 404, seen but not theirs to sign 403.
 */
export async function authorizeSigning(deps: Deps, signing: Signing, documentId: string): Promise<Signer> {
  const now = deps.clock.now();
  if (signing.kind === 'share') {
    const { recipient } = signing;
    if (!recipient.unlocked)
      throw new Forbidden('This share is protected: unlock it with POST /share/unlock');
    const share = await deps.db
      .selectFrom('shares')
      .selectAll()
      .where('id', '=', recipient.shareId)
      .executeTakeFirstOrThrow();
    if (share.document_id !== documentId) throw new ValidationError('id', 'must be the shared document');
    return shareSigner(deps, { kind: 'external', recipient }, share, now);
  }
  const { actor } = signing;
  const doc = await loadVisible(deps.db, actor, documentId);
  if (doc.kind !== 'document') throw new ValidationError('id', 'must name a document');
  const share = await deps.db
    .selectFrom('shares')
    .selectAll()
    .where('document_id', '=', doc.id)
    .where('user_id', '=', actor.userId)
    .$call((q) =>
      signing.shareId
        ? q.where('id', '=', signing.shareId)
        : q.where('purpose', '=', 'sign').where('status', 'in', ['active', 'waiting']),
    )
    .orderBy('position')
    .executeTakeFirst();
  if (share) return shareSigner(deps, { kind: 'internal', actor }, share, now);
  if (signing.shareId) throw new NotFound('No such share');
  if (!(await canEdit(deps.db, actor, doc, now)))
    throw new Forbidden(
      'Only the owner, an administrator, a signer or a user it is shared with for edit may sign this document',
    );
  return {
    doc,
    share: undefined,
    signerName: await userSignerName(deps.db, actor),
    by: actor,
    placer: { kind: 'user', actor },
    caller: { kind: 'internal', actor },
  };
}

/**
 * A recipient signing through their sign share: its turn, not ended or expired, its required files
 * submitted (spec Sharing: required fields enforced).
 */
async function shareSigner(deps: Deps, caller: RecipientCaller, share: ShareRow, now: Date): Promise<Signer> {
  assertShareCanAct(share, now);
  if (share.purpose !== 'sign') throw new Forbidden(`This share is for ${share.purpose}, not signing`);
  await assertRequiredFilesSubmitted(deps.db, share);
  return { ...(await recipientSigner(deps, caller, share)), share };
}

/**
 * A recipient as the signer of what they draw on their share's document: an external one by the name
 * the share was sent to, with the share's uploads; a user by their name, with their own files.
 */
export async function recipientSigner(deps: Deps, caller: RecipientCaller, share: ShareRow): Promise<Signer> {
  const doc = await loadDocumentForUpdate(deps.db, share.document_id);
  if (caller.kind === 'internal') {
    const { actor } = caller;
    return {
      doc,
      share,
      signerName: await userSignerName(deps.db, actor),
      by: actor,
      placer: { kind: 'user', actor },
      caller,
    };
  }
  return {
    doc,
    share,
    signerName: share.share_to,
    by: { tenantId: share.tenant_id, name: share.share_to, requestId: caller.recipient.requestId },
    placer: { kind: 'share', shareId: share.id, tenantId: share.tenant_id },
    caller,
  };
}
