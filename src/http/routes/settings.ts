import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { TenantProperties, TenantPropertiesPatch } from '../../core/settings/properties.js';
import {
  getCounters,
  readTenantProperties,
  updateCounters,
  updateProperties,
  wopiExtensions,
} from '../../core/settings/tenant-settings.js';
import { updateConfiguration } from '../../settings/update-configuration.js';
import { assignSignatureImages } from '../../users/assign-signature-images.js';
import { actorOf } from '../authentication.js';
import { withErrors, withExamples } from '../schemas.js';
import { SIGNATURE_IMAGES_RULES, SignatureImagesAnswer } from './users.js';
import { SignatureImagesBody } from '../../users/contract.js';
import { ConfigurationBody, Counters, CountersBody } from '../../settings/contract.js';

const PROPERTIES_EXAMPLE = {
  isLlmEnabled: false,
  wopiClient: 'collabora',
  disabledLanguages: ['ar'],
  dropZoneMaxSize: 40,
  storageLimitMb: 10240,
  ownerTransferEnabled: true,
  smsAddOn: false,
  sealOnComplete: true,
  defaultPadesLevel: 'B-T',
  sessionTtlDays: 30,
  consentStatements: {},
};

/** Configuration, tenant properties, counters and the WOPI client. */
export function settingsRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.put(
      '/configuration',
      {
        schema: {
          tags: ['settings'],
          operationId: 'updateConfiguration',
          summary: 'Change the caller’s own configuration',
          description:
            'Merges `configuration` into the caller’s preferences. Not here (dedicated endpoints exist): `authenticationFactors`, `filters`, `password` and `photo` are refused wherever they appear in `configuration`, at any depth and in any letter case (400 VALIDATION_ERROR naming the field path, e.g. `"configuration.ui.password"`); also `configuration.signature`/`initials` (see POST /configuration/images). At most 16 levels of nesting. The Login answer’s `user.config` never shows those keys.',
          body: ConfigurationBody,
          response: withErrors({
            200: Type.Object(
              {
                status: Type.Literal('SUCCESS'),
                configuration: Type.Object(
                  {},
                  { additionalProperties: true, description: 'The whole configuration now.' },
                ),
              },
              {
                examples: [
                  {
                    status: 'SUCCESS',
                    configuration: { signature: [], ui: { language: 'en', pageSize: 50 } },
                  },
                ],
              },
            ),
          }),
        },
      },
      async (request) => ({
        status: 'SUCCESS' as const,
        configuration: await updateConfiguration(deps, actorOf(request), {
          configuration: request.body.configuration as Record<string, unknown>,
        }),
      }),
    );

    app.post(
      '/configuration/images',
      {
        schema: {
          tags: ['settings'],
          operationId: 'assignConfigurationImages',
          summary: 'Assign the caller’s signature and initials images',
          description: `\`{signature?: [{imageId, name?}], initials?: [{imageId, name?}]}\`: the caller’s own uploads. ${SIGNATURE_IMAGES_RULES}`,
          body: SignatureImagesBody,
          response: withErrors({ 200: SignatureImagesAnswer }),
        },
      },
      async (request) => {
        const actor = actorOf(request);
        return {
          status: 'SUCCESS' as const,
          ...(await assignSignatureImages(deps, actor, actor.userId, request.body)),
        };
      },
    );

    app.get(
      '/settings/properties',
      {
        schema: {
          tags: ['settings'],
          operationId: 'getProperties',
          summary: 'Read the tenant properties (global and super administrators)',
          description:
            'What PUT /settings/properties set, in the shape it takes: every property, with its default when never set. For whoever may change them (403 otherwise); every user sees the login `settings`.',
          response: withErrors({ 200: withExamples(TenantProperties, PROPERTIES_EXAMPLE) }),
        },
      },
      async (request) => readTenantProperties(deps, actorOf(request)),
    );

    app.put(
      '/settings/properties',
      {
        schema: {
          tags: ['settings'],
          operationId: 'updateProperties',
          summary: 'Change tenant properties (global and super administrators)',
          description:
            'Renamed from /settings/property in 26.0.0. Only the listed properties exist; answers all of them.',
          body: withExamples(TenantPropertiesPatch, { ownerTransferEnabled: true, defaultPadesLevel: 'B-T' }),
          response: withErrors({
            200: Type.Object(
              { status: Type.Literal('SUCCESS'), properties: TenantProperties },
              { examples: [{ status: 'SUCCESS', properties: PROPERTIES_EXAMPLE }] },
            ),
          }),
        },
      },
      async (request) => ({
        status: 'SUCCESS' as const,
        properties: await updateProperties(deps, actorOf(request), request.body),
      }),
    );

    app.get(
      '/counters',
      {
        schema: {
          tags: ['settings'],
          operationId: 'getCounters',
          summary: 'Read the tenant counters (super administrators only)',
          description: 'What PUT /counters set, in the shape it takes: `{counters: {name: value}}`.',
          response: withErrors({
            200: Type.Object({ counters: Counters }, { examples: [{ counters: { invoiceNumber: 1042 } }] }),
          }),
        },
      },
      async (request) => ({ counters: await getCounters(deps, actorOf(request)) }),
    );

    app.put(
      '/counters',
      {
        schema: {
          tags: ['settings'],
          operationId: 'setCounters',
          summary: 'Set tenant counters (super administrators only)',
          body: CountersBody,
          response: withErrors({
            200: Type.Object(
              { status: Type.Literal('SUCCESS'), counters: Counters },
              { examples: [{ status: 'SUCCESS', counters: { invoiceNumber: 1042 } }] },
            ),
          }),
        },
      },
      async (request) => ({
        status: 'SUCCESS' as const,
        counters: await updateCounters(deps, actorOf(request), request.body.counters),
      }),
    );

    app.get(
      '/wopi/extensions',
      {
        schema: {
          tags: ['settings'],
          operationId: 'getWopiExtensions',
          summary: 'The configured WOPI client and the file extensions it opens',
          response: withErrors({
            200: Type.Object(
              { client: Type.String(), extensions: Type.Array(Type.String()) },
              { examples: [{ client: 'collabora', extensions: ['docx', 'xlsx', 'pptx', 'odt'] }] },
            ),
          }),
        },
      },
      async (request) => wopiExtensions(deps, actorOf(request)),
    );
  };
}
