import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { createStamp } from '../../stamps/create-stamp.js';
import { deleteStamp } from '../../stamps/delete-stamp.js';
import { getStampImage } from '../../stamps/get-stamp-image.js';
import { getStamp } from '../../stamps/get-stamp.js';
import { searchStamps } from '../../stamps/search-stamps.js';
import { updateStamp } from '../../stamps/update-stamp.js';
import { actorOf } from '../authentication.js';
import { deleteByKey, postBody, readByKey } from '../route-shapes.js';
import { Bytes, IMAGE_TYPES, storedFileAnswers } from '../document-schemas.js';
import { EXAMPLE_IDS } from '../../core/examples.js';
import { IdParams, withErrors } from '../schemas.js';
import { CreateStampBody, SearchStampsBody, UpdateStampBody } from '../../stamps/contract.js';
import { sendStoredFile } from '../answers.js';

const STAMP_EXAMPLE = {
  id: EXAMPLE_IDS.stampId,
  name: 'Company stamp',
  scope: 'organization',
  owner: null,
  organization: EXAMPLE_IDS.organization,
  file: '5e8d2c4b7a1f3e6d9c0b2a4f6e8d1c3b',
  createDate: '2026-03-01T08:00:00.000Z',
  modifyDate: '2026-03-01T08:00:00.000Z',
  _version: 1,
};

const StampSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    scope: Type.Enum(['personal', 'organization', 'share']),
    owner: Type.Union([Type.String(), Type.Null()], {
      description: 'Login name of a personal stamp’s owner',
    }),
    organization: Type.String({ description: 'The organization id' }),
    file: Type.String({ description: 'File id of the image' }),
    createDate: Type.String(),
    modifyDate: Type.String(),
    _version: Type.Integer(),
  },
  {
    description: 'A stamp: signature entries of type `stamp` name it by its id in `blob`.',
    examples: [STAMP_EXAMPLE],
  },
);

/** Stamps: personal and organization stamps, named by id in signature entries. */
export function stampRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    postBody(app, deps, {
      path: '/stamps',
      tag: 'stamps',
      operationId: 'createStamp',
      summary: 'Create a stamp',
      description:
        '`{name, file, scope?, organization?}`. `file` is an unused PNG or JPEG uploaded with POST /files/saveFile; anything else is 400 FILE_NOT_USABLE. `scope` `personal` (default): the caller’s own stamp. `organization`: a team stamp, usable by every member of the organization; only its administrators (or global and super administrators, who may name another `organization`) create one, else 403. A stamp may be used in any number of sign calls.',
      body: CreateStampBody,
      answers: { 200: StampSchema },
      call: createStamp,
    });

    postBody(app, deps, {
      path: '/stamps/search',
      tag: 'stamps',
      operationId: 'searchStamps',
      summary: 'Search stamps',
      description:
        'The stamps the caller may see: their personal stamps and their organization’s stamps (global and super administrators: every organization’s). `query` matches part of the name, case-insensitive; `scope` narrows; ordered by name. `size` at most 100 (default 20).',
      body: SearchStampsBody,
      answers: {
        200: Type.Object(
          {
            total: Type.Integer(),
            from: Type.Integer(),
            results: Type.Array(StampSchema),
          },
          { examples: [{ total: 1, from: 0, results: [STAMP_EXAMPLE] }] },
        ),
      },
      call: searchStamps,
    });

    readByKey(app, deps, {
      path: '/stamps/:id',
      tag: 'stamps',
      operationId: 'getStamp',
      summary: 'A stamp',
      description:
        'To its owner (personal), to the members and administrators of its organization (organization stamps); 404 to anyone else.',
      answer: StampSchema,
      read: getStamp,
    });

    app.get(
      '/stamps/:id/image',
      {
        schema: {
          tags: ['stamps'],
          operationId: 'downloadStampImage',
          summary: 'A stamp’s image',
          description:
            'The PNG or JPEG bytes, to those who may use the stamp (or manage it); 404 to anyone else.',
          params: IdParams,
          response: withErrors({
            200: Bytes('The stamp’s image (PNG or JPEG).', IMAGE_TYPES),
            ...storedFileAnswers(IMAGE_TYPES),
          }),
        },
      },
      async (request, reply) =>
        sendStoredFile(deps, reply, await getStampImage(deps, actorOf(request), request.params.id), 'inline'),
    );

    app.put(
      '/stamps/:id',
      {
        schema: {
          tags: ['stamps'],
          operationId: 'updateStamp',
          summary: 'Rename a stamp or replace its image',
          description:
            '`{name?, file?, version?}`: the owner (personal) or the organization’s administrators (organization stamps; members get 403). A new `file` follows the rules of POST /stamps. With `version` the change applies only to that `_version` (409 VERSION_MISMATCH otherwise). Answers the stamp.',
          params: IdParams,
          body: UpdateStampBody,
          response: withErrors({ 200: StampSchema, 409: Type.Ref('ErrorBody') }),
        },
      },
      async (request) => updateStamp(deps, actorOf(request), request.params.id, request.body),
    );

    deleteByKey(app, deps, {
      path: '/stamps/:id',
      tag: 'stamps',
      operationId: 'deleteStamp',
      summary: 'Delete a stamp',
      description:
        'Who may change it may delete it. Documents already signed keep the stamp’s image; the stamp can no longer be used.',
      remove: deleteStamp,
    });
  };
}
