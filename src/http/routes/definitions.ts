import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { getDefinition, saveDefinition } from '../../documents/definitions/save-definition.js';
import { actorOf } from '../authentication.js';
import { readByKey } from '../route-shapes.js';
import { withErrors } from '../schemas.js';
import {
  DEFINITION_EXAMPLE,
  DefinitionChangesBody,
  DefinitionParams,
  NewDefinitionBody,
} from '../../documents/contract.js';
import { DefinitionField } from '../../core/documents/definition-fields.js';

const DefinitionResult = Type.Object(
  {
    name: Type.String(),
    templateFile: Type.Union([Type.String(), Type.Null()]),
    builtIn: Type.Boolean({ description: 'true for `d_default`, which cannot be changed.' }),
    _version: Type.Integer(),
    description: Type.Optional(Type.String()),
    fields: Type.Optional(Type.Array(DefinitionField)),
    usableBy: Type.Optional(
      Type.Unknown({ description: 'Who may use the type: `{users, groups, roles}`; absent: everyone.' }),
    ),
  },
  {
    additionalProperties: true,
    examples: [{ name: 'invoice', templateFile: null, builtIn: false, _version: 1, ...DEFINITION_EXAMPLE }],
  },
);

/** What a definition means to the documents of its type, and who may use it. */
const RULES =
  '`fields[].required`: every document of this type carries the field in `customFields` with a non-empty value, and a described field has the described `type`; POST /documents and POST /documents/bulk/create without it, and PUT /documents/{version} or PUT /documents/edit/{version} changing `customFields` or `documentType` so that it is missing, are 400 VALIDATION_ERROR naming it (`"body.customFields" must contain the field "amount", which document type invoice requires`); drafts may lack it. `usableBy` restricts who may use the type (creating a document needs rights on both its folder and its type): others get 403 FORBIDDEN creating documents of it, changing a document to it, or naming it in a draft or template. Users in `usableBy.users` are stored as ids; unknown users or groups are 400.';

/** Document definitions (administrators) beside the built-in `d_default`. */
export function definitionRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/definitions/documents/name',
      {
        schema: {
          tags: ['definitions'],
          operationId: 'createDefinition',
          summary: 'Create a document definition (global and super administrators)',
          description: `\`templateFile\` must be a new, unused upload. A definition serves the whole tenant, so only global and super administrators create or change one (403 FORBIDDEN for organization administrators and users). ${RULES}`,
          body: NewDefinitionBody,
          response: withErrors({
            200: DefinitionResult,
            409: Type.Ref('ErrorBody'),
          }),
        },
      },
      async (request) => {
        const { name, ...data } = request.body;
        return saveDefinition(deps, actorOf(request), { name, data, create: true });
      },
    );

    app.put(
      '/definitions/documents/:name',
      {
        schema: {
          tags: ['definitions'],
          operationId: 'updateDefinition',
          summary: 'Change a document definition (global and super administrators)',
          description: `Changes the fields given (\`fields\` and \`usableBy\` as a whole; \`usableBy: null\` opens the type to everyone). Documents already made keep their fields until their \`customFields\` or \`documentType\` change. A definition serves the whole tenant, so only global and super administrators change one (403 FORBIDDEN for organization administrators and users). ${RULES}`,
          params: DefinitionParams,
          body: DefinitionChangesBody,
          response: withErrors({ 200: DefinitionResult, 409: Type.Ref('ErrorBody') }),
        },
      },
      async (request) =>
        saveDefinition(deps, actorOf(request), {
          name: request.params.name,
          data: request.body,
          create: false,
        }),
    );

    readByKey(app, deps, {
      path: '/definitions/documents/:name',
      tag: 'definitions',
      operationId: 'getDefinition',
      summary: 'Read a document definition',
      description:
        'Every member of the tenant reads every definition, `fields` and `usableBy` included, whether or not they may use it.',
      params: DefinitionParams,
      key: 'name',
      answer: DefinitionResult,
      read: getDefinition,
    });
  };
}
