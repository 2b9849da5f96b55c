import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { getDraft, saveDraft } from '../../documents/save-draft.js';
import { actorOf } from '../authentication.js';
import { postBody, readByKey } from '../route-shapes.js';
import { withErrors } from '../schemas.js';
import { DRAFT_DATA_EXAMPLE, DraftBody, DraftParams } from '../../documents/contract.js';

const DraftAnswer = Type.Object(
  {
    id: Type.String(),
    _version: Type.Integer(),
    data: Type.Object({}, { additionalProperties: true }),
    createDate: Type.String(),
    modifyDate: Type.String(),
  },
  {
    examples: [
      {
        id: 'e4c1a9b2-7d3f-4e68-8a15-3c9b0f2d6e47',
        _version: 1,
        data: DRAFT_DATA_EXAMPLE,
        createDate: '2026-03-01T07:55:00.000Z',
        modifyDate: '2026-03-01T07:55:00.000Z',
      },
    ],
  },
);

/** Drafts: documents in preparation that hold files without using them up. */
export function draftRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    postBody(app, deps, {
      path: '/drafts',
      tag: 'drafts',
      operationId: 'createDraft',
      summary: 'Create a draft',
      description:
        'Files stay usable by a document made later (“draft-only use”); `cloneMainFile`/`cloneFiles` give the draft its own copies.',
      body: DraftBody,
      answers: { 200: DraftAnswer },
      call: saveDraft,
    });

    app.put(
      '/drafts/:id/:version',
      {
        schema: {
          tags: ['drafts'],
          operationId: 'updateDraft',
          summary: 'Change a draft',
          params: DraftParams,
          body: DraftBody,
          response: withErrors({ 200: DraftAnswer, 409: Type.Ref('ErrorBody') }),
        },
      },
      async (request) => saveDraft(deps, actorOf(request), { ...request.body, ...request.params }),
    );

    readByKey(app, deps, {
      path: '/drafts/:id',
      tag: 'drafts',
      operationId: 'getDraft',
      summary: 'Read one of your drafts',
      answer: DraftAnswer,
      read: getDraft,
    });
  };
}
