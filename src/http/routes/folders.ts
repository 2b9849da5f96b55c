import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { createFolder } from '../../documents/folders/create-folder.js';
import { getFolder } from '../../documents/folders/get-folder.js';
import { actorOf } from '../authentication.js';
import { readByKey } from '../route-shapes.js';
import { EXAMPLE_IDS } from '../../core/examples.js';
import { withErrors } from '../schemas.js';
import { NewFolderBody } from '../../documents/contract.js';

const FolderContent = Type.Object(
  {
    id: Type.Union([Type.String(), Type.Null()], { description: 'null for `root`.' }),
    name: Type.String(),
    isShared: Type.Boolean({ description: 'The setting in force (the outermost folder’s).' }),
    parentFolderId: Type.Union([Type.String(), Type.Null()]),
    _version: Type.Union([Type.Integer(), Type.Null()]),
    items: Type.Array(
      Type.Object({
        id: Type.String(),
        kind: Type.Enum(['document', 'folder']),
        name: Type.String(),
        _version: Type.Integer(),
        isShared: Type.Optional(Type.Boolean()),
        modifyDate: Type.String(),
      }),
      { description: 'The folders and documents inside that the caller may see (folders first).' },
    ),
  },
  {
    examples: [
      {
        id: EXAMPLE_IDS.folderId,
        name: 'Contracts',
        isShared: true,
        parentFolderId: null,
        _version: 1,
        items: [
          {
            id: EXAMPLE_IDS.documentId,
            kind: 'document',
            name: 'Service agreement',
            _version: 5,
            modifyDate: '2026-03-01T08:05:12.000Z',
          },
        ],
      },
    ],
  },
);

/** Folders. Moving and deleting go through PUT /documents/edit/:version and DELETE /documents. */
export function folderRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/folders',
      {
        schema: {
          tags: ['folders'],
          operationId: 'createFolder',
          summary: 'Create a folder',
          description:
            '`parentFolderId` null creates it at the root. Access is inherited: a folder nested in another takes its parent’s setting whatever its own `isShared` says, so the outermost folder decides. A shared top-level folder is visible to its organization with everything nested in it (a private folder inside it too); everything under a private top-level folder is private (a shared folder inside it too) and seen only by its owners, administrators and those it is shared with.',
          body: NewFolderBody,
          response: withErrors({
            200: Type.Object({ id: Type.String() }, { examples: [{ id: EXAMPLE_IDS.folderId }] }),
          }),
        },
      },
      async (request) =>
        createFolder(deps, actorOf(request), {
          name: request.body.name,
          isShared: request.body.isShared ?? false,
          parentFolderId: request.body.parentFolderId ?? null,
        }),
    );

    readByKey(app, deps, {
      path: '/folders/:id',
      tag: 'folders',
      operationId: 'getFolder',
      summary: 'Read a folder and its content',
      description:
        '`root` lists the top level. Items are the documents and folders inside that the caller may see. `isShared` is the setting in force: the outermost folder’s, inherited by everything nested. A folder the caller may not see is 404.',
      answer: FolderContent,
      read: getFolder,
    });
  };
}
