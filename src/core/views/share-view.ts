import type { Kysely } from 'kysely';
import type { OidcProviderConfig } from '../config.js';
import type { CustomField } from '../documents/custom-fields.js';
import { readJson } from '../../store/db/json.js';
import type { Database } from '../../store/db/schema.js';
import { offeredProviders } from '../sharing/identity-factors.js';
import { showShareFields, type SignatureFieldView } from '../sharing/share-fields.js';
import { owesAction, PENDING, shareOptions, type ShareRow } from '../sharing/share-types.js';

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
  sendAttachmentsOnComplete: boolean;
  isMandatory: boolean;
  tokenGenerated: boolean;
  shareDate: string;
  validUntil: string | null;
  shareType: string;
  status: string;
  sharedBy: string;
  sharedUsername: string;
  sharedObjectEsId: string;
  sharedObjectEsType: string;
  sharedObjectType: 'document';
  sharedWith: string[];
  otpPhone?: string;
  privateMessage: string;
  language?: string;
  shareGroup: string;
  rights: string[];
  dateFormat?: string;
  timeFormat?: string;
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

export async function shareViews(
  db: Kysely<Database>,
  rows: ShareRow[],
  /** The operator's identity providers (config `oidcProviders`). */
  providers: readonly OidcProviderConfig[] = [],
): Promise<ShareView[]> {
  if (rows.length === 0) return [];
  const userIds = [...new Set(rows.map((r) => r.shared_by))];
  const [users, docs] = await Promise.all([
    db.selectFrom('users').select(['id', 'name']).where('id', 'in', userIds).execute(),
    db
      .selectFrom('documents')
      .select(['id', 'document_type', 'custom_fields'])
      .where('id', 'in', [...new Set(rows.map((r) => r.document_id))])
      .execute(),
  ]);
  const names = new Map(users.map((u) => [u.id, u.name]));
  const types = new Map(docs.map((d) => [d.id, d.document_type]));
  const customFields = new Map(docs.map((d) => [d.id, readJson<CustomField[]>(d.custom_fields, [])]));
  return rows.map((row) => {
    const options = shareOptions(row);
    const sharedBy = names.get(row.shared_by) ?? row.shared_by;
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
      sendAttachmentsOnComplete: false,
      isMandatory: options.isMandatory,
      tokenGenerated: row.token_hash !== null,
      shareDate: row.created_at,
      validUntil: row.valid_until,
      shareType: row.purpose,
      status: row.status,
      sharedBy,
      sharedUsername: sharedBy,
      sharedObjectEsId: row.document_id,
      sharedObjectEsType: types.get(row.document_id) ?? 'd_default',
      sharedObjectType: 'document',
      sharedWith: [row.share_to],
      ...(row.phone ? { otpPhone: maskPhone(row.phone) } : {}),
      privateMessage: row.message ?? '',
      ...(options.language ? { language: options.language } : {}),
      shareGroup: row.share_group,
      rights: options.rights,
      ...(options.dateFormat ? { dateFormat: options.dateFormat } : {}),
      ...(options.timeFormat ? { timeFormat: options.timeFormat } : {}),
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
      signatureFields: showShareFields(options.signatureFields, customFields.get(row.document_id) ?? []),
    };
  });
}

/**
 * Contract: `waitingFor` lists the recipients (login name or e-mail) who still owe an action, in order:
 * mandatory actions only, as only they hold the document in progress (`owesAction`).
 */
export async function waitingFor(db: Kysely<Database>, documentId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('shares')
    .select(['share_to', 'purpose', 'status', 'position', 'options'])
    .where('document_id', '=', documentId)
    .where('status', 'in', [...PENDING])
    .orderBy('position')
    .orderBy('created_at')
    .execute();
  const owed = rows.filter(owesAction);
  return [...new Set(owed.map((r) => r.share_to))];
}
