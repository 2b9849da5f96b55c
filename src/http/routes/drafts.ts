import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { getDraft, saveDraft } from '../../documents/save-draft.js';
import { actorOf } from '../authentication.js';
import { postBody, readByKey } from '../route-shapes.js';
import { Attachment, CustomField, MainFile } from '../../core/documents/document-contract.js';
import { EXAMPLE_IDS } from '../../core/examples.js';
import { withErrors } from '../schemas.js';

const DRAFT_DATA_EXAMPLE = {
  documentTitle: 'Service agreement',
  pdfFile: { content: EXAMPLE_IDS.fileId },
};

const DraftBody = Type.Object(
  {
    data: Type.Object(
      {
        documentTitle: Type.Optional(Type.String({ maxLength: 500 })),
        documentType: Type.Optional(
          Type.String({
            maxLength: 200,
            description:
              'A document definition the caller may use (400 unknown, 403 when its `usableBy` leaves the caller out; a type the draft already has is kept). A draft may lack the fields the type requires: they are checked when a document is made.',
          }),
        ),
        pdfFile: Type.Optional(MainFile),
        file: Type.Optional(Type.Array(Attachment, { maxItems: 20 })),
        customFields: Type.Optional(Type.Array(CustomField, { maxItems: 500 })),
        customTemplate: Type.Optional(Type.String({ maxLength: 100 })),
      },
      {
        additionalProperties: false,
        description: '`thumbnail` and `barcode` are no longer accepted in drafts.',
      },
    ),
    cloneMainFile: Type.Optional(Type.Boolean()),
    cloneFiles: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, examples: [{ data: DRAFT_DATA_EXAMPLE }] },
);

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
          summary: 'Change a draft',
          params: Type.Object({
            id: Type.String({ minLength: 1, maxLength: 100 }),
            version: Type.Integer({ minimum: 1 }),
          }),
          body: DraftBody,
          response: withErrors({ 200: DraftAnswer, 409: Type.Ref('ErrorBody') }),
        },
      },
      async (request) => saveDraft(deps, actorOf(request), { ...request.body, ...request.params }),
    );

    readByKey(app, deps, {
      path: '/drafts/:id',
      tag: 'drafts',
      summary: 'Read one of your drafts',
      answer: DraftAnswer,
      read: getDraft,
    });
  };
}
