import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../deps.js';
import { getTemplate } from '../../templates/get-template.js';
import { createTemplate, editTemplates } from '../../templates/save-template.js';
import { actorOf } from '../authentication.js';
import { FileId, SignatureField, SignEntity } from '../document-schemas.js';
import { withErrors } from '../schemas.js';

const TemplateData = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 500 }),
    documentType: Type.Optional(Type.String({ maxLength: 200 })),
    definitionType: Type.Optional(Type.String({ maxLength: 50 })),
    file: Type.Optional(FileId),
    sequential: Type.Optional(
      Type.Boolean({ description: 'Signatures collected in sequence (true) or in parallel.' }),
    ),
    category: Type.Optional(Type.String({ maxLength: 200 })),
    signEntities: Type.Optional(Type.Array(SignEntity, { maxItems: 100 })),
    signFields: Type.Optional(Type.Array(SignatureField, { maxItems: 1000 })),
    type: Type.Optional(Type.Enum(['sign'])),
  },
  { additionalProperties: false, description: 'spec: Template (`thumbnail` is no longer accepted).' },
);

const Edit = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 100 }),
    version: Type.Optional(Type.Integer({ minimum: 1 })),
    data: TemplateData,
    cloneFile: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** Signature templates (spec: Templates; Files usage rule 5). */
export function templateRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/templates',
      {
        schema: {
          tags: ['templates'],
          summary: 'Create a template',
          description:
            '`data.file` must be an unused upload, or `cloneFile` true makes the template its own copy (usage rule 5).',
          body: Type.Object(
            { data: TemplateData, cloneFile: Type.Optional(Type.Boolean()) },
            { additionalProperties: false },
          ),
          response: withErrors({ 200: Type.Object({ id: Type.String() }) }),
        },
      },
      async (request) => createTemplate(deps, actorOf(request), request.body),
    );

    app.get(
      '/templates/:templateId',
      {
        schema: {
          tags: ['templates'],
          summary: 'Read a template',
          description:
            'The stored record: the data fields with `file`, `_version`, `__id`, `__addedBy`, `__addedOn`, `__owner`, `__users`, `__groups`.',
          params: Type.Object({ templateId: Type.String({ minLength: 1, maxLength: 100 }) }),
        },
      },
      async (request) => getTemplate(deps, actorOf(request), request.params.templateId),
    );

    app.put(
      '/templates',
      {
        schema: {
          tags: ['templates'],
          summary: 'Edit templates',
          description:
            'One `{id, data, version?, cloneFile?}` or an array of up to 100 (413 beyond), all or none; `data` replaces the stored data. Answers `{status, results:[{id, _version}]}`.',
          body: Type.Union([Edit, Type.Array(Edit, { minItems: 1, maxItems: 1000 })]),
          response: withErrors({
            200: Type.Object({
              status: Type.Literal('SUCCESS'),
              results: Type.Array(Type.Object({ id: Type.String(), _version: Type.Integer() })),
            }),
            409: Type.Ref('ErrorBody'),
            413: Type.Ref('ErrorBody'),
          }),
        },
      },
      async (request) => ({
        status: 'SUCCESS' as const,
        results: await editTemplates(
          deps,
          actorOf(request),
          Array.isArray(request.body) ? request.body : [request.body],
        ),
      }),
    );
  };
}
