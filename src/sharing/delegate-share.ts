import type { Static } from 'typebox';
import type { DelegateBody } from './contract.js';
import { randomUUID } from 'node:crypto';
import type { Deps } from '../core/deps.js';
import { changeDocument } from '../core/changes/change-document.js';
import { Forbidden, ValidationError } from '../base/errors.js';
import { queueMail } from '../jobs/notification-jobs.js';
import { shareMail } from '../notify/mail/share-mail.js';
import { writeJson } from '../store/db/json.js';
import { checkOAuthFactors } from './create-shares.js';
import { loadCallerShare } from '../core/sharing/recipient.js';
import { callerName, callerRequestId, type RecipientCaller } from '../core/access/recipient-caller.js';
import { assertShareCanAct } from '../core/sharing/recipient-actions.js';
import { issueShareLink } from '../core/sharing/share-links.js';
import { shareOptions, type ShareRow } from '../core/sharing/share-types.js';
import { shareViews, type ShareView } from '../core/views/share-view.js';
import { loadDocumentForUpdate } from '../core/sharing/workflow.js';
import { writeTransaction } from '../store/db/dialect.js';

/**
 * PUT /share/delegate (spec Sharing rule 3): a recipient whose share has the `delegate` right hands it
 * to another external recipient, who gets their own link. Without `oauthFactors` the new share is
 * protected by `email` only. Emits `signDelegated`.
 */
export async function delegateShare(
  deps: Deps,
  caller: RecipientCaller,
  options: Static<typeof DelegateBody>,
): Promise<ShareView> {
  const share = await loadCallerShare(deps, caller, options.id);
  const now = deps.clock.now();
  assertShareCanAct(share, now);
  const current = shareOptions(share);
  if (!current.rights.includes('delegate'))
    throw new Forbidden('This share may not be delegated (right delegate)');
  const email = options.shareTo.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
    throw new ValidationError('shareTo', 'must be a valid email');
  }
  if (email === share.share_to) throw new ValidationError('A share cannot be delegated to its own recipient');
  const factors = checkOAuthFactors(options.oauthFactors, options.allowedOAuths, email, '');
  const by = { tenantId: share.tenant_id, name: callerName(caller), requestId: callerRequestId(caller) };
  const row = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const created: ShareRow = {
      ...share,
      id: randomUUID(),
      share_to: email,
      user_id: null,
      email,
      status: share.status,
      message: options.message ?? share.message,
      password_hash: null,
      phone: null,
      // The delegate proves who they are anew, through the providers the share allows (rule 3).
      identity_provider: null,
      identity_verified_at: null,
      otp_hash: null,
      otp_expires_at: null,
      options: writeJson({
        ...current,
        oauthFactors: factors,
        allowedOAuths: options.allowedOAuths ?? [],
        rights: current.rights.filter((r) => r !== 'delegate'),
      }),
      last_reminder_at: null,
      message_read: 0,
      delegated_from: share.id,
      acted_at: null,
      reason: null,
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
    };
    await trx.insertInto('shares').values(created).execute();
    const token = await issueShareLink(trx, created, now);
    await trx
      .updateTable('shares')
      .set({
        status: 'delegated',
        acted_at: now.toISOString(),
        next_reminder_at: null,
        updated_at: now.toISOString(),
      })
      .where('id', '=', share.id)
      .execute();
    const doc = await loadDocumentForUpdate(trx, share.document_id);
    await changeDocument(trx, by, {
      doc,
      expectedVersion: doc.version,
      set: {},
      activityType: 'signDelegated',
      event: 'signDelegated',
      data: { from: share.share_to, to: email, shareId: created.id },
      now,
    });
    await queueMail(
      trx,
      shareMail({
        kind: 'invitation',
        to: email,
        language: current.language,
        documentTitle: doc.title,
        from: by.name,
        purpose: share.purpose,
        link: `${deps.config.publicUrl}/s/${token}`,
        note: options.message,
      }),
      now,
      by.requestId,
    );
    return created;
  });
  const [view] = await shareViews(deps.db, [row], deps.config.oidcProviders);
  if (!view) throw new Error('delegated share missing');
  return view;
}
