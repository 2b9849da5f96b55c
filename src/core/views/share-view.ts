import type { Kysely } from 'kysely';
import type { OidcProviderConfig } from '../../base/config.js';
import type { CustomField } from '../documents/custom-fields.js';
import { readJson } from '../../store/db/json.js';
import type { Database, Json } from '../../store/db/schema.js';
import { offeredProviders } from '../sharing/identity-factors.js';
import { showShareFields, type SignatureFieldView } from '../sharing/share-fields.js';
import { owesAction, PENDING, SHARE_DEFAULTS, shareOptions, type ShareRow } from '../sharing/share-types.js';

/** The spec's Share object (response of POST /share). */
export interface ShareView {
  shareId: string;
  isActive: boolean;
  isPermanentViewToken: boolean;
  messageRead: boolean;
  passwordRequired: boolean;
  otpEnabled: boolean;
  sequential: boolean;
  isDelegated: boolean;
  /** For a delegated share read by its recipient: who passed it on to them (their `shareTo`). */
  delegatedBy?: string;
  sendAttachmentsOnComplete: boolean;
  isMandatory: boolean;
  tokenGenerated: boolean;
  shareDate: string;
  validUntil: string | null;
  shareType: string;
  status: string;
  sharedBy: string;
  sharedUsername: string;
  /** The name the sharer shows (their display name, else their login name): what a recipient reads. */
  sharedByDisplayName: string;
  sharedObjectEsId: string;
  sharedObjectEsType: string;
  /** `folder` for a share of a folder (its contents inherit it). */
  sharedObjectType: 'document' | 'folder';
  sharedWith: string[];
  /** A folder shared with a group: the organization's id (`sharedWith` holds its name). */
  groupId?: string;
  otpPhone?: string;
  privateMessage: string;
  language: string;
  shareGroup: string;
  rights: string[];
  dateFormat: string;
  timeFormat: string;
  order: number;
  oauthFactors: { type: string; value: string }[];
  allowedOAuths: string[];
  /**
   * The identity providers the recipient may prove who they are with: those of `allowedOAuths` the
   * operator configured (OIDC_PROVIDERS, names matched ignoring case). GET /share/oidc/{name} starts one.
   */
  identityProviders: { name: string; label: string }[];
  /** Which of them proved the recipient's identity, and when. */
  identityVerified?: { provider: string; at: string };
  userRoleId?: number;
  userRoleName?: string;
  /** For a member of a sign entity: how many of the entity's members must sign. */
  quorum?: number;
  /** The recipient's signature fields; imported custom fields carry their value (spec Custom field). */
  signatureFields: SignatureFieldView[];
}

/** `+971501234567` → `*********4567`: only the last digits visible (spec Share `otpPhone`). */
export function maskPhone(phone: string): string {
  const digits = phone.replace(/\s+/g, '');
  return `${'*'.repeat(Math.max(0, digits.length - 4))}${digits.slice(-4)}`;
}

/** What a share's view shows of its sharer and its document. */
export interface ShareContext {
  /** The sharer's login name; their id when the user is gone. */
  sharedByName: string | undefined;
  /** The sharer's display name, when they have one. */
  sharedByDisplayName?: string | null | undefined;
  documentType: string | undefined;
  /** What the share is of: a document (the default) or a folder. */
  kind?: 'document' | 'folder' | undefined;
  customFields: Json | undefined;
  /** The `shareTo` of the share this one was delegated from, when the reader may know it. */
  delegatedBy?: string | undefined;
  /** Whether a link was issued for the share (spec Share `tokenGenerated`; share_links). */
  linkIssued?: boolean | undefined;
}

export async function shareViews(
  db: Kysely<Database>,
  rows: ShareRow[],
  /** The operator's identity providers (config `oidcProviders`). */
  providers: readonly OidcProviderConfig[] = [],
): Promise<ShareView[]> {
  if (rows.length === 0) return [];
  const userIds = [...new Set(rows.map((r) => r.shared_by))];
  const [users, docs, links] = await Promise.all([
    db.selectFrom('users').select(['id', 'name', 'display_name']).where('id', 'in', userIds).execute(),
    db
      .selectFrom('documents')
      .select(['id', 'kind', 'document_type', 'custom_fields'])
      .where('id', 'in', [...new Set(rows.map((r) => r.document_id))])
      .execute(),
    db
      .selectFrom('share_links')
      .select('share_id')
      .distinct()
      .where(
        'share_id',
        'in',
        rows.map((r) => r.id),
      )
      .execute(),
  ]);
  const linked = new Set(links.map((l) => l.share_id));
  const names = new Map(users.map((u) => [u.id, u]));
  const documents = new Map(docs.map((d) => [d.id, d]));
  return rows.map((row) =>
    shareView(
      row,
      {
        sharedByName: names.get(row.shared_by)?.name,
        sharedByDisplayName: names.get(row.shared_by)?.display_name,
        documentType: documents.get(row.document_id)?.document_type,
        kind: documents.get(row.document_id)?.kind,
        customFields: documents.get(row.document_id)?.custom_fields,
        linkIssued: linked.has(row.id),
      },
      providers,
    ),
  );
}

/** The spec's Share object of one share, its sharer and document already read (`shareViews` reads them). */
export function shareView(
  row: ShareRow,
  context: ShareContext,
  providers: readonly OidcProviderConfig[],
): ShareView {
  const options = shareOptions(row);
  const sharedBy = context.sharedByName ?? row.shared_by;
  return {
    shareId: row.id,
    isActive:
      PENDING.includes(row.status) || (row.status === 'done' && !['sign', 'execute'].includes(row.purpose)),
    isPermanentViewToken: row.purpose === 'view' && row.valid_until === null,
    messageRead: row.message_read === 1,
    passwordRequired: row.password_hash !== null,
    otpEnabled: row.phone !== null || options.emailCode === true,
    sequential: row.sequential === 1,
    isDelegated: row.delegated_from !== null,
    ...(context.delegatedBy ? { delegatedBy: context.delegatedBy } : {}),
    sendAttachmentsOnComplete: false,
    isMandatory: options.isMandatory,
    tokenGenerated: context.linkIssued === true,
    shareDate: row.created_at,
    validUntil: row.valid_until,
    shareType: row.purpose,
    status: row.status,
    sharedBy,
    sharedUsername: sharedBy,
    sharedByDisplayName: context.sharedByDisplayName || sharedBy,
    sharedObjectEsId: row.document_id,
    sharedObjectEsType: context.documentType ?? 'd_default',
    sharedObjectType: context.kind === 'folder' ? 'folder' : 'document',
    sharedWith: [row.share_to],
    ...(row.group_id ? { groupId: row.group_id } : {}),
    ...(row.phone ? { otpPhone: maskPhone(row.phone) } : {}),
    privateMessage: row.message ?? '',
    language: options.language ?? SHARE_DEFAULTS.language,
    shareGroup: row.share_group,
    rights: options.rights,
    dateFormat: options.dateFormat ?? SHARE_DEFAULTS.dateFormat,
    timeFormat: options.timeFormat ?? SHARE_DEFAULTS.timeFormat,
    order: row.position,
    oauthFactors: options.oauthFactors,
    allowedOAuths: options.allowedOAuths,
    identityProviders: offeredProviders(options.allowedOAuths, providers).map((p) => ({
      name: p.name,
      label: p.label,
    })),
    ...(row.identity_provider && row.identity_verified_at
      ? { identityVerified: { provider: row.identity_provider, at: row.identity_verified_at } }
      : {}),
    ...(options.userRoleId !== undefined ? { userRoleId: options.userRoleId } : {}),
    ...(options.userRoleName !== undefined ? { userRoleName: options.userRoleName } : {}),
    ...(row.quorum !== null ? { quorum: row.quorum } : {}),
    signatureFields: showShareFields(
      options.signatureFields,
      readJson<CustomField[]>(context.customFields, []),
    ),
  };
}

/**
 * Contract: `waitingFor` lists the recipients (login name or e-mail) who still owe an action, in order:
 * mandatory actions only, as only they hold the document in progress (`owesAction`). `pending` are the
 * document's shares in a PENDING status, by position then creation.
 */
export function waitingFor(pending: readonly Pick<ShareRow, 'share_to' | 'purpose' | 'options'>[]): string[] {
  return [...new Set(pending.filter(owesAction).map((r) => r.share_to))];
}
