import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { listInbox } from '../../sharing/inbox.js';
import { actFromInbox } from '../../sharing/act-from-inbox.js';
import { actorOf } from '../authentication.js';
import { ShareObject } from '../document-schemas.js';
import { SHARE_EXAMPLE } from '../../core/examples.js';
import { InboxActionBody } from '../../sharing/contract.js';
import { withErrors } from '../schemas.js';
import { ActionAnswer, VISUALS_DRAWN } from './share-actions.js';

/** An internal user's pending actions and acting on one. */
export function inboxRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/inbox',
      {
        schema: {
          tags: ['sharing'],
          operationId: 'listInbox',
          summary: 'Your pending actions, or what you acted on',
          description:
            'The shares addressed to the caller that still owe an action, each with its document’s title; act on one with POST /inbox/action. With `state=done`, the shares the caller acted on (signed, approved, ...), the latest first, each with its document’s `documentShareState` (`completed` once everyone has acted): read or download the document with GET /documents/{id}.',
          querystring: Type.Object({
            state: Type.Optional(Type.Enum(['pending', 'done'], { default: 'pending' })),
          }),
          response: withErrors({
            200: Type.Object(
              {
                total: Type.Integer(),
                results: Type.Array(
                  Type.Object(
                    {
                      ...ShareObject.properties,
                      documentTitle: Type.String(),
                      documentShareState: Type.Union([Type.String(), Type.Null()], {
                        description: 'The document’s share state: `inprogress`, `completed`, `rejected`, …',
                      }),
                    },
                    { additionalProperties: true },
                  ),
                ),
              },
              {
                examples: [
                  {
                    total: 1,
                    results: [
                      {
                        ...SHARE_EXAMPLE,
                        passwordRequired: false,
                        sharedWith: ['ivy'],
                        oauthFactors: [],
                        signatureFields: [],
                        documentTitle: 'Service agreement',
                        documentShareState: 'inprogress',
                      },
                    ],
                  },
                ],
              },
            ),
          }),
        },
      },
      async (request) => listInbox(deps, actorOf(request), request.query.state),
    );

    app.post(
      '/inbox/action',
      {
        schema: {
          tags: ['sharing'],
          operationId: 'actOnInbox',
          summary: 'Act on a pending action',
          description: [
            '`{shareId, action: sign|approve|review|accept|execute|reject, reason?, comment?}`: an internal user acts on a share addressed to them (a share that is not theirs: 404), as POST /share/execute and PUT /share/reject do for it. `action` must be the share’s purpose, or `reject`.',
            `\`sign\` takes \`signatures\` (required), \`images\`, \`annotations\` and \`level\` and signs as PUT /documents/sign/{version} does for that share: a PAdES signature in the user’s name, the share done, \`documentSigned\` (and \`documentCompleted\`, with the seal, for the last). The simple actions take them as POST /share/execute does; \`reject\` takes \`signatures\`, \`images\` and \`annotations\` with the share right \`canAnnotateOnReject\` (403 without), drawn without a digital signature. Signature and initials images from POST /files/signature|initials, \`images\` unused uploads from POST /files/saveFile. ${VISUALS_DRAWN}`,
          ].join('\n\n'),
          body: InboxActionBody,
          response: ActionAnswer,
        },
      },
      async (request) => actFromInbox(deps, actorOf(request), request.body),
    );
  };
}
