import { Type } from 'typebox';
import { EXAMPLE_IDS } from '../core/examples.js';
import { From, Scroll, Size } from '../core/paging-contract.js';

/**
 * What the audit-log calls take: the schemas the routes check requests against (with their OpenAPI
 * descriptions and examples), from which the use cases' input types are made (`Static<>`).
 */

/** The body of POST /logs/search: the filters, paging and scrolling. */
export const LogsSearchBody = Type.Object(
  {
    logsQuery: Type.Object(
      {
        query: Type.Optional(
          Type.Object(
            {
              filter: Type.Optional(
                Type.Array(
                  Type.Union([
                    Type.Object(
                      {
                        type: Type.Literal('term'),
                        field: Type.String({ maxLength: 50 }),
                        value: Type.String({ maxLength: 500 }),
                      },
                      { additionalProperties: false },
                    ),
                    Type.Object(
                      {
                        type: Type.Literal('terms'),
                        field: Type.String({ maxLength: 50 }),
                        values: Type.Array(Type.String({ maxLength: 500 }), {
                          minItems: 1,
                          maxItems: 100,
                        }),
                      },
                      { additionalProperties: false },
                    ),
                    Type.Object(
                      {
                        type: Type.Literal('range'),
                        field: Type.String({ maxLength: 50 }),
                        gte: Type.Optional(Type.String({ maxLength: 40 })),
                        gt: Type.Optional(Type.String({ maxLength: 40 })),
                        lte: Type.Optional(Type.String({ maxLength: 40 })),
                        lt: Type.Optional(Type.String({ maxLength: 40 })),
                      },
                      { additionalProperties: false },
                    ),
                  ]),
                  { maxItems: 20 },
                ),
              ),
            },
            { additionalProperties: false },
          ),
        ),
        size: Type.Optional(Size(1000, 100)),
        from: Type.Optional(From),
      },
      { additionalProperties: false },
    ),
    scroll: Type.Optional(Scroll),
  },
  {
    additionalProperties: false,
    examples: [
      {
        logsQuery: {
          query: { filter: [{ type: 'term', field: 'objectId', value: EXAMPLE_IDS.documentId }] },
          size: 100,
        },
        scroll: { timeout: 60 },
      },
    ],
  },
);

/** The body of DELETE /logs/scroll. */
export const CloseScrollBody = Type.Object(
  { scrollId: Type.String({ minLength: 1, maxLength: 200 }) },
  {
    additionalProperties: false,
    examples: [{ scrollId: 'k9Wd3Pq7Zt1Lx5Nb.1.Rt6Ym2Kp8Wx3Qz5Nv1Hc7Ja4' }],
  },
);
