import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { getTemplate } from '../../templates/get-template.js';
import { createTemplate, editTemplates } from '../../templates/save-template.js';
import { actorOf } from '../authentication.js';
import { postBody, readByKey } from '../route-shapes.js';
import { EXAMPLE_IDS } from '../../core/examples.js';
import {
  CreateTemplateBody,
  EditTemplatesBody,
  TEMPLATE_DATA_EXAMPLE,
  TemplateData,
  TemplateParams,
} from '../../templates/contract.js';
import { withErrors } from '../schemas.js';

/** Who reaches a template: its `__owner`, `__users` and `__groups`. */
const REACH =
  'A template is seen (read, edited, its file downloaded) by its owner (`__owner`), the users in `__users`, the members of the groups (organizations) in `__groups`, and the administrators of its organization (global and super administrators: of the tenant); being in the same organization is not enough. A template the caller may not see is 404 NOT_FOUND (its existence does not leak); one they see but neither own nor administer is 403 FORBIDDEN on change.';

/** Signature templates. */

const TemplateRecord = Type.Object(
  {
    ...TemplateData.properties,
    file: Type.Union([Type.String(), Type.Null()], { description: 'The template’s file id.' }),
    _version: Type.Integer(),
    __id: Type.String(),
    __addedBy: Type.String({ description: 'Login name of its creator.' }),
    __addedOn: Type.String(),
    __owner: Type.String({ description: 'The owner’s user id.' }),
    __users: Type.Array(Type.String()),
    __groups: Type.Array(Type.String()),
  },
  {
    additionalProperties: true,
    examples: [
      {
        ...TEMPLATE_DATA_EXAMPLE,
        _version: 1,
        __id: EXAMPLE_IDS.templateId,
        __addedBy: 'admin@example.com',
        __addedOn: '2026-03-01T08:00:00.000Z',
        __owner: EXAMPLE_IDS.userId,
        __users: [EXAMPLE_IDS.userId],
        __groups: [],
      },
    ],
  },
);
export function templateRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    postBody(app, deps, {
      path: '/templates',
      tag: 'templates',
      operationId: 'createTemplate',
      summary: 'Create a template',
      description: `\`data.file\` must be an unused upload, or \`cloneFile\` true makes the template its own copy. Unknown \`__users\` or \`__groups\` are 400. ${REACH}`,
      body: CreateTemplateBody,
      answers: {
        200: Type.Object({ id: Type.String() }, { examples: [{ id: EXAMPLE_IDS.templateId }] }),
      },
      call: createTemplate,
    });

    readByKey(app, deps, {
      path: '/templates/:templateId',
      tag: 'templates',
      operationId: 'getTemplate',
      summary: 'Read a template',
      description: `The stored record: the data fields with \`file\`, \`_version\`, \`__id\`, \`__addedBy\`, \`__addedOn\`, \`__owner\`, \`__users\`, \`__groups\`. ${REACH}`,
      params: TemplateParams,
      key: 'templateId',
      answer: TemplateRecord,
      read: getTemplate,
    });

    app.put(
      '/templates',
      {
        schema: {
          tags: ['templates'],
          operationId: 'editTemplates',
          summary: 'Edit templates',
          description: `One \`{id, data, version?, cloneFile?}\` or an array of up to 100 (413 beyond), all or none; \`data\` replaces the stored data (\`__users\`/\`__groups\` only when given). Answers \`{status, results:[{id, _version}]}\`. ${REACH}`,
          body: EditTemplatesBody,
          response: withErrors({
            200: Type.Object(
              {
                status: Type.Literal('SUCCESS'),
                results: Type.Array(Type.Object({ id: Type.String(), _version: Type.Integer() })),
              },
              { examples: [{ status: 'SUCCESS', results: [{ id: EXAMPLE_IDS.templateId, _version: 2 }] }] },
            ),
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
