import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { searchReports } from '../../search/reports.js';
import { locateDocument, searchDocuments } from '../../search/search-documents.js';
import { SEARCHABLE_FIELDS } from '../../search/es-filters.js';
import { actorOf } from '../authentication.js';
import { postBody } from '../route-shapes.js';
import { useMinified } from '../minified.js';
import { DocumentResult } from '../document-schemas.js';
import { EXAMPLE_IDS, SIGNED_DOCUMENT_EXAMPLE } from '../../core/examples.js';
import { withErrors } from '../schemas.js';
import { LocateBody, ReportsBody, SearchBody } from '../../search/contract.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const SearchAnswer = Type.Object(
  {
    from: Type.Integer(),
    size: Type.Integer(),
    total: Type.Integer(),
    results: Type.Array(DocumentResult),
    users: Type.Array(
      Type.Object({ id: Type.String(), name: Type.String(), displayName: Nullable(Type.String()) }),
      { description: 'The owners and creators the results name, once each.' },
    ),
  },
  {
    examples: [
      {
        from: 0,
        size: 20,
        total: 1,
        results: [SIGNED_DOCUMENT_EXAMPLE],
        users: [{ id: EXAMPLE_IDS.userId, name: 'admin@example.com', displayName: 'Administrator' }],
      },
    ],
  },
);

const Transaction = Type.Object({
  shareId: Type.String(),
  shareType: Type.String(),
  sharedWith: Type.String(),
  sharedBy: Type.String(),
  status: Type.String(),
  order: Type.Integer(),
  shareDate: Type.String(),
  actionDate: Nullable(Type.String()),
  reason: Nullable(Type.String()),
});

const ReportsAnswer = Type.Object(
  {
    from: Type.Integer(),
    total: Type.Integer(),
    results: Type.Array(
      Type.Object({
        documentId: Type.String(),
        documentTitle: Type.String(),
        documentType: Type.String(),
        createName: Type.Object({ id: Type.String(), name: Type.String() }),
        owner: Type.String(),
        shareStateName: Nullable(Type.String()),
        workflowType: Type.String(),
        isSigned: Type.Boolean(),
        _version: Type.Integer(),
        createDate: Type.String(),
        modifyDate: Type.String(),
        transactions: Type.Array(Transaction, {
          description: 'The document’s shares and what became of them.',
        }),
        signers: Type.Array(
          Type.Object({ name: Type.String(), status: Type.String(), signedAt: Nullable(Type.String()) }),
        ),
      }),
    ),
    scrollId: Type.Optional(
      Type.String({ description: 'With `scroll.timeout`: send it as `scroll.id` for the next page.' }),
    ),
  },
  {
    examples: [
      {
        from: 0,
        total: 1,
        results: [
          {
            documentId: EXAMPLE_IDS.documentId,
            documentTitle: 'Service agreement',
            documentType: 'd_default',
            createName: { id: EXAMPLE_IDS.userId, name: 'admin@example.com' },
            owner: 'admin@example.com',
            shareStateName: 'completed',
            workflowType: 'wf_archive',
            isSigned: true,
            _version: 5,
            createDate: '2026-03-01T08:00:02.000Z',
            modifyDate: '2026-03-01T08:05:12.000Z',
            transactions: [
              {
                shareId: EXAMPLE_IDS.shareId,
                shareType: 'sign',
                sharedWith: 'ivy@example.com',
                sharedBy: EXAMPLE_IDS.userId,
                status: 'done',
                order: 0,
                shareDate: '2026-03-01T08:01:00.000Z',
                actionDate: '2026-03-01T08:05:11.000Z',
                reason: null,
              },
            ],
            signers: [{ name: 'ivy@example.com', status: 'done', signedAt: '2026-03-01T08:05:11.000Z' }],
          },
        ],
        scrollId: 'Qx8vTk4NpL7wRz2m.1.Lp3Xw8Zk2Vn6Qr9Ty4Md1Hs7',
      },
    ],
  },
);

/** Search and reports. */
export function searchRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    useMinified(app);
    postBody(app, deps, {
      path: '/search',
      tag: 'search',
      operationId: 'searchDocuments',
      summary: 'Search the documents and folders the caller may see',
      description:
        'Owned, created, shared with the caller, administered, or inside a shared folder of the caller’s organization (at any depth). `text` looks for every word in titles and custom field values (case-insensitive). Results are shaped like GET /documents/{id}; `users` lists the owners and creators they name.',
      body: SearchBody,
      answers: { 200: SearchAnswer },
      call: searchDocuments,
    });

    app.post(
      '/search/locate',
      {
        schema: {
          tags: ['search'],
          operationId: 'locateDocument',
          summary: 'Locate a document: its folder path and its position in the default search order',
          description:
            'Body `{id}`. Answers `{documentId, kind, path:[{id, name}], from}`: `path` lists the visible folders above it, outermost first; POST /search with `from` gives a page starting with it.',
          body: LocateBody,
          response: withErrors({
            200: Type.Object(
              {
                documentId: Type.String(),
                kind: Type.String(),
                path: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
                from: Type.Integer(),
              },
              {
                examples: [
                  {
                    documentId: EXAMPLE_IDS.documentId,
                    kind: 'document',
                    path: [{ id: EXAMPLE_IDS.folderId, name: 'Contracts' }],
                    from: 40,
                  },
                ],
              },
            ),
          }),
        },
      },
      async (request) => locateDocument(deps, actorOf(request), request.body.id),
    );

    app.post(
      '/search/reports',
      {
        schema: {
          tags: ['search'],
          operationId: 'searchReports',
          summary: 'Transaction detail reports (right use_all_documents_export)',
          description: `Body \`{query:{esFilters, from, size, scroll:{timeout, id}}}\`. \`esFilters\` is an Elasticsearch bool query (\`{bool:{filter, must, should, must_not}}\`; leaves \`term\`, \`terms\`, \`range\`, \`exists\`, \`match\`, \`match_all\`, \`nested\` with \`path\` \`createName\`, \`workflow\` or \`transactions\`). Fields: ${SEARCHABLE_FIELDS.join(', ')}. Newest first. With \`scroll.timeout\` the answer carries a \`scrollId\`: repeat the same request with \`scroll.id\` set to the latest one to get the next page (an older id is 400; an expired context 404). Answers \`{from, total, results, scrollId}\`; each result has \`documentTitle\`, \`documentId\`, \`createName\`, \`shareStateName\`, \`transactions\` and \`signers\`.`,
          body: ReportsBody,
          response: withErrors({ 200: ReportsAnswer }),
        },
      },
      async (request) => searchReports(deps, actorOf(request), request.body.query),
    );
  };
}
