import type { Static } from 'typebox';
import type { CancelSharingBody, RemindersBody, ShareEditData } from './contract.js';
import type { Updateable } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import { hashPassword } from '../core/identity/secrets.js';
import type { Deps } from '../core/deps.js';
import { loadManageable, loadVisible } from '../core/access/document-access.js';
import {
  Conflict,
  Forbidden,
  LimitExceeded,
  NotFound,
  RateLimited,
  ValidationError,
} from '../base/errors.js';
import { getProperties } from '../core/settings/tenant-settings.js';
import { writeJson } from '../store/db/json.js';
import type { ShareTable } from '../store/db/schema.js';
import { isAdmin } from '../core/access/roles.js';
import type { OidcProviderConfig } from '../base/config.js';
import { changeRecipient } from './change-recipient.js';
import { checkAllowedOAuths, checkOAuthFactors, firstReminder } from './create-shares.js';
import { resolveRecipient } from './resolve-recipient.js';
import { revokeFolderShares } from './share-folder.js';
import { endRecipientSessions } from '../core/sharing/recipient-session.js';
import { queueReminderSms, queueShareMail } from '../core/sharing/share-mails.js';
import { PENDING, REMINDABLE_PURPOSES, shareOptions, type ShareRow } from '../core/sharing/share-types.js';
import { shareViews, type ShareView } from '../core/views/share-view.js';
import { endProcess, loadDocumentForUpdate } from '../core/sharing/workflow.js';
import { writeTransaction } from '../store/db/dialect.js';

const DAY_MS = 86_400_000;

/**
 * POST /share/cancel `{id, reason?}` (our call for the spec's `cancelled`: "the process was cancelled
 * by the document owner"): the owner or an administrator withdraws a document in progress. Of a folder:
 * ends its shares, and with them the access its users had to it and everything in it.
 */
export async function cancelSharing(deps: Deps, actor: Actor, options: Static<typeof CancelSharingBody>) {
  const doc = await loadManageable(deps.db, actor, options.id);
  if (doc.kind === 'folder') return revokeFolderShares(deps, actor, doc, options.reason);
  if (doc.share_state !== 'inprogress')
    throw new Conflict(
      `Only a document in progress can be cancelled (it is ${doc.share_state ?? 'not shared'})`,
    );
  const now = deps.clock.now();
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await endProcess(trx, {
      doc: await loadDocumentForUpdate(trx, doc.id),
      state: 'cancelled',
      by: actor,
      now,
      reason: options.reason,
    });
  });
}

/**
 * POST /share/reminder (spec Reminders): by document (every eligible recipient) or by shares. Only
 * pending sign, approve and review shares; only the document owner or the original sharer (others who
 * see the document: 403); one reminder per day per share (429 REMINDER_TOO_SOON with Retry-After); SMS
 * only with the SMS add-on.
 */
export async function sendReminders(
  deps: Deps,
  actor: Actor,
  options: Static<typeof RemindersBody>,
): Promise<{ reminded: number }> {
  const type = options.reminderType ?? 'email';
  if (!options.documentId && !options.shares?.length) {
    throw new ValidationError('documentId', 'or "shares" is required');
  }
  if (type === 'sms' && !(await getProperties(deps, actor)).smsAddOn) {
    throw new Forbidden('SMS reminders need the SMS add-on (setting smsAddOn)');
  }
  let shares: ShareRow[];
  if (options.shares?.length) {
    const ids = options.shares.map((s) => s.shareId);
    shares = await deps.db
      .selectFrom('shares')
      .selectAll()
      .where('id', 'in', ids)
      .where('tenant_id', '=', actor.tenantId)
      .execute();
    if (shares.length !== new Set(ids).size) throw new NotFound('No such share');
  } else {
    shares = await deps.db
      .selectFrom('shares')
      .selectAll()
      .where('document_id', '=', options.documentId ?? '')
      .where('tenant_id', '=', actor.tenantId)
      .execute();
  }
  const documentIds = [
    ...new Set(shares.map((s) => s.document_id).concat(options.documentId ? [options.documentId] : [])),
  ];
  const docs = new Map<string, Awaited<ReturnType<typeof loadVisible>>>();
  for (const id of documentIds) docs.set(id, await loadVisible(deps.db, actor, id));
  for (const share of shares) {
    const doc = docs.get(share.document_id);
    // spec Reminders: "only the document owner or original sharer may send"; an administrator who
    // can see the document is neither (Contract: 403).
    if (doc?.owner_id !== actor.userId && share.shared_by !== actor.userId) {
      throw new Forbidden('Only the document owner or the original sharer may send reminders');
    }
  }
  const now = deps.clock.now();
  const eligible = shares.filter(
    (s) => PENDING.includes(s.status) && s.status === 'active' && REMINDABLE_PURPOSES.includes(s.purpose),
  );
  if (options.shares?.length && eligible.length !== shares.length) {
    throw new ValidationError('Only shares with a pending sign, approve or review action get reminders');
  }
  const tooSoon = eligible.filter(
    (s) => s.last_reminder_at && now.getTime() - new Date(s.last_reminder_at).getTime() < DAY_MS,
  );
  const due = options.shares?.length
    ? tooSoon.length
      ? []
      : eligible
    : eligible.filter((s) => !tooSoon.includes(s));
  if (due.length === 0) {
    if (tooSoon.length) {
      const next = Math.min(...tooSoon.map((s) => new Date(s.last_reminder_at ?? 0).getTime() + DAY_MS));
      throw new RateLimited(
        'One reminder per day per share: try again later',
        (next - now.getTime()) / 1000,
        'REMINDER_TOO_SOON',
      );
    }
    throw new ValidationError('No recipient of this document owes a sign, approve or review action');
  }
  const phones = new Map((options.shares ?? []).map((s) => [s.shareId, s.phone]));
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    for (const share of due) {
      const doc = docs.get(share.document_id);
      if (!doc) continue;
      if (type === 'sms') {
        const phone = phones.get(share.id) ?? share.phone;
        if (!phone) throw new ValidationError(null, `share ${share.id} has no phone: send "phone"`);
        await queueReminderSms(trx, deps, share, { phone, documentTitle: doc.title }, now, actor.requestId);
      } else {
        await queueShareMail(
          trx,
          deps,
          share,
          { kind: 'reminder', documentTitle: doc.title },
          now,
          actor.requestId,
        );
      }
      await trx
        .updateTable('shares')
        .set({ last_reminder_at: now.toISOString() })
        .where('id', '=', share.id)
        .execute();
    }
  });
  return { reminded: due.length };
}

/** One edit of PUT /share; `shareTo` moves the pending share to another recipient (change-recipient.ts). */
export type ShareEdit = Static<typeof ShareEditData>;

/**
 * PUT /share (spec: bulk edit of shares; replaces PUT /share/{shareId}/recipient): the owner or
 * original sharer changes pending shares, up to 100, all or none. `oauthFactors` follow rule 3,
 * `allowedOAuths` name configured providers, `shareTo` moves the share to another recipient.
 */
export async function editShares(deps: Deps, actor: Actor, edits: ShareEdit[]): Promise<ShareView[]> {
  if (edits.length > 100) throw new LimitExceeded('At most 100 shares per request');
  const now = deps.clock.now();
  const hashed = await Promise.all(
    edits.map((e) => (e.password ? hashPassword(e.password) : Promise.resolve(null))),
  );
  const rows = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const changed: ShareRow[] = [];
    for (const [i, edit] of edits.entries()) {
      const share = await trx
        .selectFrom('shares')
        .selectAll()
        .where('id', '=', edit.shareId)
        .where('tenant_id', '=', actor.tenantId)
        .executeTakeFirst();
      if (!share) throw new NotFound('No such share');
      const doc = await loadVisible(trx, actor, share.document_id);
      if (doc.owner_id !== actor.userId && share.shared_by !== actor.userId && !isAdmin(actor.role)) {
        throw new Forbidden('Only the document owner or the original sharer may change shares');
      }
      if (!PENDING.includes(share.status)) throw new Conflict(`Share ${share.id} is ${share.status}`);
      const at = `data[${i}]`;
      const recipient = edit.shareTo
        ? await resolveRecipient(trx, actor.tenantId, edit.shareTo, at)
        : undefined;
      const { set, protectionsChanged } = mergeEdit(share, edit, {
        at,
        hashedPassword: hashed[i] ?? null,
        email: recipient ? recipient.email : share.email,
        internal: recipient ? recipient.user !== undefined : share.user_id !== null,
        providers: deps.config.oidcProviders,
      });
      await trx
        .updateTable('shares')
        .set({ ...set, updated_at: now.toISOString() })
        .where('id', '=', share.id)
        .execute();
      // Whoever passed the old protections passes the new ones: the share's sessions end.
      if (protectionsChanged) await endRecipientSessions(trx, share.id);
      if (edit.shareTo) {
        const updated = await trx
          .selectFrom('shares')
          .selectAll()
          .where('id', '=', share.id)
          .executeTakeFirstOrThrow();
        await changeRecipient(trx, deps, { actor, share: updated, doc, shareTo: edit.shareTo, at, now });
      }
      changed.push(
        await trx.selectFrom('shares').selectAll().where('id', '=', share.id).executeTakeFirstOrThrow(),
      );
    }
    return changed;
  });
  return shareViews(deps.db, rows, deps.config.oidcProviders);
}

/**
 * How a partial edit changes a share (Contract: "No edit of a share weakens a protection it does not
 * name"): a field left out keeps its value, `null` removes it, a value replaces it. Protections
 * (`password`, `phone`, `emailCode`, `allowedOAuths`, `oauthFactors`, `validUntil`) change only when
 * named, and whether the link is locked follows from them (protect-share.ts `isProtected`), so no
 * edit of anything else can unlock it.
 */
function mergeEdit(
  share: ShareRow,
  edit: ShareEdit,
  context: {
    at: string;
    hashedPassword: string | null;
    /** The recipient's e-mail after the edit (a moved share's new recipient). */
    email: string | null;
    /** Whether the recipient after the edit is a user (protections are for external links). */
    internal: boolean;
    providers: readonly OidcProviderConfig[];
  },
): { set: Updateable<ShareTable>; protectionsChanged: boolean } {
  const options = shareOptions(share);
  if ((edit.password || edit.phone || edit.emailCode) && context.internal) {
    throw new ValidationError(
      `${context.at}.password`,
      'is for external recipients only, as are phone and emailCode',
    );
  }
  // New factors or providers must be proven anew: an earlier sign-in proved the old ones.
  const identityChanged = edit.oauthFactors !== undefined || edit.allowedOAuths !== undefined;
  if (identityChanged) {
    checkAllowedOAuths(edit.allowedOAuths, context.providers, context.at);
    options.allowedOAuths = edit.allowedOAuths ?? options.allowedOAuths;
    options.oauthFactors = checkOAuthFactors(
      edit.oauthFactors ?? options.oauthFactors,
      options.allowedOAuths,
      context.email,
      context.at,
    );
  }
  if (edit.emailCode !== undefined) {
    if (edit.emailCode) options.emailCode = true;
    else delete options.emailCode;
  }
  if (edit.rights) options.rights = edit.rights;
  if (edit.language) options.language = edit.language;
  if (edit.automaticReminder !== undefined) options.automaticReminder = edit.automaticReminder ?? undefined;
  const protectionsChanged =
    identityChanged ||
    edit.password !== undefined ||
    edit.phone !== undefined ||
    edit.emailCode !== undefined;
  return {
    protectionsChanged,
    set: {
      ...(edit.validUntil !== undefined
        ? { valid_until: edit.validUntil && new Date(edit.validUntil).toISOString() }
        : {}),
      ...(edit.message !== undefined ? { message: edit.message } : {}),
      ...(edit.password !== undefined ? { password_hash: context.hashedPassword } : {}),
      ...(edit.phone !== undefined ? { phone: edit.phone } : {}),
      ...(identityChanged ? { identity_provider: null, identity_verified_at: null } : {}),
      options: writeJson(options),
      ...(edit.automaticReminder !== undefined
        ? { next_reminder_at: firstReminder(share.purpose, edit.automaticReminder) }
        : {}),
    },
  };
}
