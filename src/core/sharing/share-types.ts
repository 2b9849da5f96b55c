import type { Selectable } from 'kysely';
import { readJson } from '../../store/db/json.js';
import type { ShareTable } from '../../store/db/schema.js';
import { DEFAULT_DATE_FORMAT } from './date-format.js';

export type ShareRow = Selectable<ShareTable>;

export const PURPOSES = ['view', 'edit', 'sign', 'execute', 'approve', 'review', 'accept'] as const;
export type Purpose = (typeof PURPOSES)[number];

/** Purposes whose recipient owes an action (they count in `waitingFor` and in sequences). */
export const ACTION_PURPOSES: readonly string[] = ['sign', 'execute', 'approve', 'review', 'accept'];
/** spec Reminders: only shares with pending sign, approve or review actions get reminders. */
export const REMINDABLE_PURPOSES: readonly string[] = ['sign', 'approve', 'review'];
/** Share statuses in which the recipient still owes the action. */
export const PENDING: readonly string[] = ['active', 'waiting'];
/**
 * The status of a sign share whose sign entity has its quorum: enough of the entity's other members
 * signed, so this signature is no longer awaited (sign-entities.ts).
 */
export const NOT_REQUIRED = 'notRequired';

export const SHARE_RIGHTS = [
  'print',
  'delegate',
  'metadata',
  'canAnnotateOnReject',
  'uploadFiles',
  // Recipients draw only in their own fields without it (core/sharing/field-confinement.ts).
  'freePlacement',
] as const;

/**
 * What a share uses when POST /share did not say (spec Share `language`, `dateFormat`, `timeFormat`),
 * answered in every Share object so a client reads the setting in force rather than an absence:
 * English, the language mails, the signer's page and the consent statement fall back to
 * (notify/mail/share-mail.ts); date fields in ISO 8601's calendar date (date-format.ts); the time drawn
 * under a signature, UTC to the second (pdf/visuals/appearance-factory.ts `formatTime`). No tenant or
 * organization setting changes them.
 */
export const SHARE_DEFAULTS = {
  language: 'en',
  dateFormat: DEFAULT_DATE_FORMAT,
  timeFormat: 'HH:mm:ss',
} as const;

/** The value of `allowedOAuths` naming the national digital identity provider (spec Sharing rule 3). */
export const NATIONAL_ID_PROVIDER = 'uaePass';
export const OAUTH_FACTOR_TYPES = ['email', 'phoneNumber', 'emiratesId'] as const;

export interface OAuthFactor {
  type: (typeof OAUTH_FACTOR_TYPES)[number];
  value: string;
}

export interface ShareOptions {
  rights: string[];
  language?: string | undefined;
  dateFormat?: string | undefined;
  timeFormat?: string | undefined;
  oauthFactors: OAuthFactor[];
  allowedOAuths: string[];
  automaticReminder?: { start: string; intervalDays: number } | undefined;
  signatureFields: Record<string, unknown>[];
  isMandatory: boolean;
  /** External recipients unlock with a one-time code sent by e-mail (POST /share/otp). */
  emailCode?: boolean | undefined;
  /** The recipient's role (spec Signature field / Sign entity `userRoleId`, `userRoleName`). */
  userRoleId?: number | undefined;
  userRoleName?: string | undefined;
}

/**
 * Whether a share decides the process: it owes an action (ACTION_PURPOSES) and is mandatory. Only
 * such shares keep a document in progress, appear in `waitingFor` and end the process when they
 * expire; an optional one (`isMandatory: false`) may act but is never waited for.
 */
export function owesAction(share: Pick<ShareRow, 'purpose' | 'options'>): boolean {
  return ACTION_PURPOSES.includes(share.purpose) && shareOptions(share).isMandatory;
}

export function shareOptions(row: Pick<ShareRow, 'options'>): ShareOptions {
  return readJson<ShareOptions>(row.options, {
    rights: [],
    oauthFactors: [],
    allowedOAuths: [],
    signatureFields: [],
    isMandatory: true,
  });
}
