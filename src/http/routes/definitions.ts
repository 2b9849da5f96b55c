import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { getDefinition, saveDefinition } from '../../documents/definitions/save-definition.js';
import { actorOf } from '../authentication.js';
import { FileId } from '../document-schemas.js';
import { withErrors } from '../schemas.js';

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$' });
const Fields = {
  templateFile: Type.Optional(FileId),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  fields: Type.Optional(
    Type.Array(
      Type.Object(
        {
          key: Type.String({ minLength: 1, maxLength: 200 }),
          displayName: Type.Optional(Type.String({ maxLength: 500 })),
          type: Type.Enum(['string', 'number', 'date']),
          required: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
      { maxItems: 500 },
    ),
  ),
};

/** Document definitions (administrators) beside the built-in `d_default`. */
export function definitionRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/definitions/documents/name',
      {
        schema: {
          tags: ['definitions'],
          summary: 'Create a document definition (global and super administrators)',
          description:
            '`templateFile` must be a new, unused upload (spec Files, usage rule 4). A definition serves the whole tenant, so only global and super administrators create or change one (403 FORBIDDEN for organization administrators and users).',
          body: Type.Object({ name: Name, ...Fields }, { additionalProperties: false }),
          response: withErrors({
            200: Type.Object({}, { additionalProperties: true }),
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
          summary: 'Change a document definition (global and super administrators)',
          description:
            'Changes the fields given. A definition serves the whole tenant, so only global and super administrators change one (403 FORBIDDEN for organization administrators and users).',
          params: Type.Object({ name: Name }),
          body: Type.Object(Fields, { additionalProperties: false }),
        },
      },
      async (request) =>
        saveDefinition(deps, actorOf(request), {
          name: request.params.name,
          data: request.body,
          create: false,
        }),
    );

    app.get(
      '/definitions/documents/:name',
      {
        schema: {
          tags: ['definitions'],
          summary: 'Read a document definition',
          params: Type.Object({ name: Name }),
        },
      },
      async (request) => getDefinition(deps, actorOf(request), request.params.name),
    );
  };
}
