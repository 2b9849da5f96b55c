import type { Static } from 'typebox';
import type { ConsentBody } from './contract.js';
import type { Deps } from '../core/deps.js';
import { ConsentChanged } from '../base/errors.js';
import { record } from '../core/audit/record.js';
import { callerName, callerRequestId, type RecipientCaller } from '../core/access/recipient-caller.js';
import { consentStatement, type ConsentStatement } from '../core/sharing/consent-statement.js';
import { loadCallerShare } from '../core/sharing/recipient.js';
import { assertShareCanAct } from '../core/sharing/recipient-actions.js';
import { shareOptions, type ShareRow } from '../core/sharing/share-types.js';
import { getProperties } from '../core/settings/tenant-settings.js';
import { writeTransaction } from '../store/db/dialect.js';

/** The consent statement a share's recipient is shown: the tenant's wording in the share's language. */
export async function consentOfShare(deps: Deps, share: ShareRow): Promise<ConsentStatement> {
  const properties = await getProperties(deps, { tenantId: share.tenant_id });
  return consentStatement(properties, shareOptions(share).language);
}

/**
 * POST /share/consent `{sha256, id?}` (DESIGN "Decided this round": "the signer accepts an
 * electronic-signature consent statement; the acceptance is an audit record with activity
 * `consentAccepted` (time, address, the statement's SHA-256)"). The recipient names the statement they
 * read by its SHA-256: one that is no longer in force (the tenant reworded it meanwhile) is 409, so
 * nobody is recorded as accepting words they were not shown. The record's object is the document, so
 * the document's audit trail (and the copy its seal embeds) carries it. Signing does not require it:
 * integrators with their own page record consent their way.
 */
export async function acceptConsent(
  deps: Deps,
  caller: RecipientCaller,
  options: Static<typeof ConsentBody> & { address: string },
): Promise<{ accepted: true; acceptedAt: string }> {
  // A stranger's document is "not found" (loadCallerShare); an ended link never gets here (401).
  const share = await loadCallerShare(deps, caller, options.id);
  const now = deps.clock.now();
  // Consent is given to sign now: a share whose turn has not come, or that is over, owes none.
  assertShareCanAct(share, now);
  const statement = await consentOfShare(deps, share);
  if (statement.sha256 !== options.sha256.toLowerCase()) {
    throw new ConsentChanged(
      'The consent statement changed since it was read: reload the document, read the statement in force and accept it',
    );
  }
  await writeTransaction(deps.db, deps.dialect, (trx) =>
    record(trx, {
      tenantId: share.tenant_id,
      actorId: callerName(caller),
      activityType: 'consentAccepted',
      objectType: 'document',
      objectId: share.document_id,
      requestId: callerRequestId(caller),
      data: {
        shareId: share.id,
        statementSha256: statement.sha256,
        language: statement.language,
        address: options.address,
      },
      at: now,
    }),
  );
  return { accepted: true, acceptedAt: now.toISOString() };
}
