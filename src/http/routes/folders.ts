import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../deps.js';
import { createFolder } from '../../folders/create-folder.js';
import { getFolder } from '../../folders/get-folder.js';
import { actorOf } from '../authentication.js';
import { withErrors } from '../schemas.js';

/** Folders (spec: Folders). Moving and deleting go through PUT /documents/edit/:version and DELETE /documents. */
export function folderRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/folders',
      {
        schema: {
          tags: ['folders'],
          summary: 'Create a folder',
          description:
            '`parentFolderId` null creates it at the root. A shared folder is visible to its organization, and so is everything nested in it; under a private folder things stay private.',
          body: Type.Object(
            {
              name: Type.String({ minLength: 1, maxLength: 500 }),
              isShared: Type.Optional(Type.Boolean({ default: false })),
              parentFolderId: Type.Optional(
                Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()]),
              ),
            },
            { additionalProperties: false },
          ),
          response: withErrors({ 200: Type.Object({ id: Type.String() }) }),
        },
      },
      async (request) =>
        createFolder(deps, actorOf(request), {
          name: request.body.name,
          isShared: request.body.isShared ?? false,
          parentFolderId: request.body.parentFolderId ?? null,
        }),
    );

    app.get(
      '/folders/:id',
      {
        schema: {
          tags: ['folders'],
          summary: 'Read a folder and its content',
          description:
            '`root` lists the top level. Items are the documents and folders inside that the caller may see.',
          params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }),
        },
      },
      async (request) => getFolder(deps, actorOf(request), request.params.id),
    );
  };
}
