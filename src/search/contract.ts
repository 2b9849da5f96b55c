import { Type } from 'typebox';
import { DocumentId } from '../core/documents/document-contract.js';
import { EXAMPLE_IDS } from '../core/examples.js';
import { From, Scroll, Size } from '../core/paging-contract.js';

/**
 * What the search calls take: the schemas the routes check requests against (with their OpenAPI
 * descriptions and examples), from which the use cases' input types are made (`Static<>`).
 */

/** The body of POST /search: which page of what, in which order. */
export const SearchBody = Type.Object(
  {
    from: Type.Optional(From),
    size: Type.Optional(Size(100, 20)),
    text: Type.Optional(Type.String({ maxLength: 500 })),
    folderId: Type.Optional(DocumentId),
    kind: Type.Optional(Type.Enum(['document', 'folder'])),
    shareStateName: Type.Optional(Type.String({ maxLength: 50 })),
    isSigned: Type.Optional(Type.Boolean()),
    sort: Type.Optional(Type.Enum(['createDate', 'modifyDate', 'documentTitle'])),
    order: Type.Optional(Type.Enum(['asc', 'desc'])),
  },
  {
    additionalProperties: false,
    examples: [{ text: 'service agreement', kind: 'document', shareStateName: 'completed', size: 20 }],
  },
);

/** The body of POST /search/locate. */
export const LocateBody = Type.Object(
  { id: DocumentId },
  { additionalProperties: false, examples: [{ id: EXAMPLE_IDS.documentId }] },
);

/** The body of POST /search/reports: the filter (Elasticsearch-style), paging and scrolling. */
export const ReportsBody = Type.Object(
  {
    query: Type.Object(
      {
        esFilters: Type.Optional(Type.Unknown()),
        from: Type.Optional(From),
        size: Type.Optional(Size(1000, 100)),
        scroll: Type.Optional(Scroll),
      },
      { additionalProperties: false },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        query: {
          esFilters: {
            bool: {
              filter: [
                {
                  nested: {
                    path: 'workflow',
                    query: { term: { 'workflow.shareStateName': 'completed' } },
                  },
                },
              ],
            },
          },
          size: 100,
          scroll: { timeout: 60 },
        },
      },
    ],
  },
);
