import { Type, type Static } from 'typebox';
import { readJson } from '../../store/db/json.js';
import type { Json } from '../../store/db/schema.js';

/** The longest consent statement a tenant may set, per language (core/sharing/consent-statement.ts). */
export const CONSENT_STATEMENT_MAX = 4000;

/** PAdES baseline levels a tenant may name as its default (ETSI EN 319 142-1). */
export const PADES_LEVELS = ['B-B', 'B-T', 'B-LT', 'B-LTA'] as const;

/** The two supported WOPI clients (spec Versioning 5: two values for two clients). */
export const WOPI_CLIENTS = ['collabora', 'onlyoffice'] as const;

/**
 * Tenant properties, changed by PUT /settings/properties and shown in the login `settings`.
 * Only these keys exist; anything else is rejected, so a typo does not silently do nothing.
 */
export const TenantProperties = Type.Object(
  {
    isLlmEnabled: Type.Boolean({ description: 'Whether assistant features are offered to users.' }),
    wopiClient: Type.Union([Type.Enum([...WOPI_CLIENTS]), Type.Null()], {
      description: 'Online editor used for office files; null for none.',
    }),
    disabledLanguages: Type.Array(Type.String({ minLength: 2, maxLength: 10 }), {
      maxItems: 100,
      description: 'Interface languages users may not pick.',
    }),
    dropZoneMaxSize: Type.Integer({
      minimum: 1,
      maximum: 1024,
      description: 'Largest single upload in MB; attachments may total 5 times this, at most 1 GB.',
    }),
    storageLimitMb: Type.Integer({
      minimum: 1,
      maximum: 100 * 1024 * 1024,
      description: 'Storage quota of each organization in MB (`storage.limit` of upload answers).',
    }),
    ownerTransferEnabled: Type.Boolean({ description: 'Whether PUT /documents/owner may move ownership.' }),
    smsAddOn: Type.Boolean({ description: 'Whether SMS reminders and codes may be sent.' }),
    sealOnComplete: Type.Boolean({
      description: 'Seal a document with the organisation key when it completes.',
    }),
    defaultPadesLevel: Type.Union([Type.Enum([...PADES_LEVELS]), Type.Null()], {
      description:
        'PAdES level of sign and seal calls that name none (a call’s `level` wins). null: B-T when the server has a time-stamp authority (TSA_URL), else B-B. B-T, B-LT and B-LTA need one: naming them without TSA_URL is refused (400); should TSA_URL go away later, calls sign at B-B and say so (`fellBack`, `reason`).',
    }),
    sessionTtlDays: Type.Integer({
      minimum: 1,
      maximum: 365,
      description: 'Lifetime of new session tokens.',
    }),
    consentStatements: Type.Record(
      Type.String({ pattern: '^[a-z]{2}$' }),
      Type.Union([Type.String({ minLength: 1, maxLength: CONSENT_STATEMENT_MAX }), Type.Null()]),
      {
        maxProperties: 50,
        description:
          'The electronic-signature consent statement recipients accept before signing (GET /share/document `consent`, POST /share/consent), by language code (`en`, `de`, `fr`, …), each at most 4000 characters. A language left out, or null, reads the built-in statement for that language (English when there is none). The object replaces the one before as a whole. A changed statement is a new SHA-256: a page showing the old one is asked to reload.',
        examples: [
          {
            en: 'I agree to sign electronically; my electronic signature binds me as my handwritten one does.',
          },
        ],
      },
    ),
  },
  { additionalProperties: false },
);
export type TenantProperties = Static<typeof TenantProperties>;

export const TenantPropertiesPatch = Type.Partial(TenantProperties, {
  additionalProperties: false,
  minProperties: 1,
});
export type TenantPropertiesPatch = Static<typeof TenantPropertiesPatch>;

export function defaultProperties(sessionTtlDays: number): TenantProperties {
  return {
    isLlmEnabled: false,
    wopiClient: null,
    disabledLanguages: [],
    dropZoneMaxSize: 40,
    storageLimitMb: 10 * 1024,
    ownerTransferEnabled: false,
    smsAddOn: false,
    sealOnComplete: true,
    defaultPadesLevel: null,
    sessionTtlDays,
    consentStatements: {},
  };
}

export function readProperties(stored: Json, sessionTtlDays: number): TenantProperties {
  return { ...defaultProperties(sessionTtlDays), ...readJson<Partial<TenantProperties>>(stored, {}) };
}

/** The login response's `settings` (spec: Login response). */
export function loginSettings(properties: TenantProperties): Record<string, unknown> {
  return {
    isLlmEnabled: properties.isLlmEnabled,
    wopiClient: properties.wopiClient,
    disabledLanguages: properties.disabledLanguages,
    dropZoneMaxSize: properties.dropZoneMaxSize,
    ownerTransferEnabled: properties.ownerTransferEnabled,
  };
}
