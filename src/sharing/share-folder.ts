import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import type { DocumentRow } from '../core/access/document-access.js';
import { isTenantWide } from '../core/access/roles.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { ValidationError } from '../base/errors.js';
import { writeJson } from '../store/db/json.js';
import type { ShareOptions, ShareRow } from '../core/sharing/share-types.js';
import { shareViews, type ShareView } from '../core/views/share-view.js';
import { writeTransaction } from '../store/db/dialect.js';
import type { ShareRequest } from './create-shares.js';
import { resolveRecipient, type ResolvedRecipient } from './resolve-recipient.js';

/**
 * What a folder share may be for. spec Folder: "Access is inherited", so sharing a folder grants access
 * (spec Sharing: "view = read-only, edit = edit rights") to it and everything in it; the other purposes
 * ask a recipient to act on one document and have nothing to act on in a folder.
 */
export const FOLDER_SHARE_PURPOSES: readonly string[] = ['view', 'edit'];

/** What a recipient of a folder share may carry besides `sharePurpose` and `shareTo`. */
const RECIPIENT_FIELDS = new Set(['sharePurpose', 'shareTo', 'message', 'validUntil']);
/** What the body of a folder share may carry besides `id`, `type`, `objectType` and `data`. */
const BODY_FIELDS = new Set(['id', 'type', 'objectType', 'data']);

/** Whom a folder share is for: one user, or a group (an organization of the tenant) and its members. */
interface FolderRecipient {
  /** How recipients are told apart (each once). */
  key: string;
  name: string;
  userId: string | null;
  groupId: string | null;
  email: string | null;
}

/**
 * `shareTo` of a folder share: a user of the tenant (login name or e-mail, as for a document), else a
 * group, an organization of the tenant by id or name as POST /groups/search lists them. Like that
 * search, a caller who is not a global or super administrator may name only their own organization:
 * another is answered as unknown.
 */
async function resolveFolderRecipient(
  deps: Deps,
  actor: Actor,
  shareTo: string,
  at: string,
): Promise<FolderRecipient> {
  const resolved: ResolvedRecipient | Error = await resolveRecipient(
    deps.db,
    actor.tenantId,
    shareTo,
    at,
  ).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
  if (!(resolved instanceof Error) && resolved.user) {
    return {
      key: `user:${resolved.user.id}`,
      name: resolved.user.name,
      userId: resolved.user.id,
      groupId: null,
      email: resolved.email,
    };
  }
  // A suspended user stays refused as such, not taken for a group of the same name.
  if (resolved instanceof ValidationError && /suspended/.test(resolved.message)) throw resolved;
  const key = shareTo.trim().toLowerCase();
  const group = await deps.db
    .selectFrom('organizations')
    .select(['id', 'name'])
    .where('tenant_id', '=', actor.tenantId)
    .where((eb) => eb.or([eb('id', '=', shareTo.trim()), eb(sql<string>`lower(name)`, '=', key)]))
    .executeTakeFirst();
  if (group && (isTenantWide(actor.role) || group.id === actor.organizationId)) {
    return { key: `group:${group.id}`, name: group.name, userId: null, groupId: group.id, email: null };
  }
  throw new ValidationError(
    `${at}.shareTo`,
    'must be a user or a group (organization) of the tenant: a folder is shared with users and groups (external recipients get a share of a document)',
  );
}

/**
 * POST /share of a folder (spec Folder: folders are "a special kind of document" and "access is
 * inherited"): shares it with users or groups (organizations) of the tenant for `view` or `edit`.
 * While a share is active its user, or every member of its group, sees the folder and everything in it, nested folders too and what is added later, on every
 * read path (core/access/document-access.ts `canView`, `visibleTo`); `edit` also lets them change the
 * documents in it and add to it (`canEdit`, `canFileInto`). It ends with its `validUntil`, with POST
 * /share/cancel of the folder, or when the folder is deleted. No mail is sent, nothing is signed and
 * the folder has no workflow: what does not apply to a folder is refused (400), never ignored.
 */
export async function shareFolder(
  deps: Deps,
  actor: Actor,
  folder: DocumentRow,
  request: ShareRequest,
): Promise<ShareView[]> {
  for (const key of Object.keys(request)) {
    if (!BODY_FIELDS.has(key)) throw new ValidationError(key, 'does not apply to a folder share');
  }
  const now = deps.clock.now();
  const seen = new Set<string>();
  const recipients: FolderRecipient[] = [];
  for (const [i, input] of request.data.entries()) {
    const at = `data[${i}]`;
    for (const key of Object.keys(input)) {
      if (!RECIPIENT_FIELDS.has(key))
        throw new ValidationError(`${at}.${key}`, 'does not apply to a folder share');
    }
    if (!FOLDER_SHARE_PURPOSES.includes(input.sharePurpose)) {
      throw new ValidationError(
        `${at}.sharePurpose`,
        `must be one of [${FOLDER_SHARE_PURPOSES.join(', ')}] for a folder (a folder is shared for access; share a document in it for "${input.sharePurpose}")`,
      );
    }
    const recipient = await resolveFolderRecipient(deps, actor, input.shareTo, at);
    if (seen.has(recipient.key)) throw new ValidationError(`${at}.shareTo`, 'contains a duplicate value');
    seen.add(recipient.key);
    if (input.validUntil && new Date(input.validUntil) <= now) {
      throw new ValidationError(`${at}.validUntil`, 'must be in the future');
    }
    recipients.push(recipient);
  }

  const group = randomUUID();
  const options: ShareOptions = {
    rights: [],
    oauthFactors: [],
    allowedOAuths: [],
    signatureFields: [],
    // A folder share owes no action: nothing waits for it.
    isMandatory: false,
  };
  const rows = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const created: ShareRow[] = [];
    for (const [i, r] of recipients.entries()) {
      const input = request.data[i]!;
      const row: ShareRow = {
        id: randomUUID(),
        tenant_id: actor.tenantId,
        document_id: folder.id,
        share_group: group,
        shared_by: actor.userId,
        purpose: input.sharePurpose,
        share_to: r.name,
        user_id: r.userId,
        group_id: r.groupId,
        email: r.email,
        status: 'active',
        sequential: 0,
        position: i,
        message: input.message ?? null,
        valid_until: input.validUntil ? new Date(input.validUntil).toISOString() : null,
        password_hash: null,
        phone: null,
        otp_hash: null,
        otp_expires_at: null,
        options: writeJson(options),
        next_reminder_at: null,
        last_reminder_at: null,
        message_read: 0,
        delegated_from: null,
        acted_at: null,
        reason: null,
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
        sign_entity: null,
        quorum: null,
        identity_provider: null,
        identity_verified_at: null,
      };
      await trx.insertInto('shares').values(row).execute();
      created.push(row);
    }
    await recordAction(trx, actor, {
      activityType: 'folderShared',
      objectType: 'folder',
      objectId: folder.id,
      data: {
        recipients: created.map((row) => row.share_to),
        purposes: created.map((row) => row.purpose),
        shareIds: created.map((row) => row.id),
      },
      at: now,
    });
    return created;
  });
  return shareViews(deps.db, rows, deps.config.oidcProviders);
}

/**
 * POST /share/cancel of a folder: ends every active share of it (status `cancelled`), so their users
 * lose the access they had through it, to the folder and everything in it, at once.
 */
export async function revokeFolderShares(
  deps: Deps,
  actor: Actor,
  folder: DocumentRow,
  reason: string | undefined,
): Promise<void> {
  const now = deps.clock.now();
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const ended = await trx
      .updateTable('shares')
      .set({ status: 'cancelled', reason: reason ?? null, updated_at: now.toISOString() })
      .where('document_id', '=', folder.id)
      .where('status', '=', 'active')
      .returning(['id', 'share_to'])
      .execute();
    await recordAction(trx, actor, {
      activityType: 'folderSharesRevoked',
      objectType: 'folder',
      objectId: folder.id,
      data: {
        shareIds: ended.map((s) => s.id),
        recipients: ended.map((s) => s.share_to),
        reason: reason ?? null,
      },
      at: now,
    });
  });
}
