import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { delegateShare } from '../../sharing/delegate-share.js';
import { executeShare } from '../../sharing/execute-share.js';
import { rejectShare } from '../../sharing/reject-share.js';
import { recipientCallerOf } from '../authentication.js';
import { ShareObject } from '../document-schemas.js';
import { SHARE_EXAMPLE, SIGN_OUTCOME_EXAMPLE } from '../../core/examples.js';
import { RECIPIENT_FIELDS_ONLY, SIGNING_WARNINGS } from './signing.js';
import { ConsentBody, DelegateBody } from '../../sharing/contract.js';
import { acceptConsent } from '../../sharing/accept-consent.js';
import { ExecuteShareBody, RejectShareBody } from '../../sharing/contract.js';
import { Success, withErrors, withExamples } from '../schemas.js';
import { answerSuccess } from '../answers.js';

export const VISUALS_DRAWN = `The entries are drawn as in PUT /share/document/sign/{version}, with its rules and messages (400 VALIDATION_ERROR \`"signatures[0].position.percentX" must be less than or equal to 1\`, 400 FILE_NOT_USABLE naming the field); the main file gets a new id and the old one stays a revision. On any error nothing is written and no file is used up. ${RECIPIENT_FIELDS_ONLY}`;
const ActionOutcome = Type.Object(
  {
    status: Type.Literal('SUCCESS'),
    levelAchieved: Type.Optional(
      Type.String({ description: 'When the call signed: the PAdES level reached.' }),
    ),
    fellBack: Type.Optional(
      Type.Boolean({
        description: 'When the call signed: true when the TSA failed and a lower level was made.',
      }),
    ),
    reason: Type.Optional(Type.String()),
    warnings: Type.Optional(Type.Array(Type.String(), { description: SIGNING_WARNINGS })),
    shareStateName: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description:
          'When the call drew or signed: the document’s share state after it (`completed` when it was the last action).',
      }),
    ),
  },
  {
    description:
      'As PUT /documents/sign/{version} answers when the call signed; `{status}` alone for a plain action.',
    examples: [SIGN_OUTCOME_EXAMPLE],
  },
);
/** What the calls that act on a share answer (POST /share/execute, POST /inbox/action). */
export const ActionAnswer = withErrors({ 200: ActionOutcome, 409: Type.Ref('ErrorBody') });

/** The recipients' actions on their share: reject, execute, delegate. */
export function shareActionRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.put(
      '/share/reject',
      {
        config: { auth: 'recipient' },
        schema: {
          tags: ['sharing'],
          operationId: 'rejectShare',
          summary: 'Reject (recipients)',
          description: [
            '`{id (documentId), reason?}`: the document becomes `rejected`, other pending shares end, `signRejected` is sent.',
            `With the share right \`canAnnotateOnReject\` the recipient may first draw notes on the document: \`images\`, text \`annotations\` and \`signatures\` entries (initials, marks), drawn as annotations in one incremental update without a digital signature (a rejection signs nothing): audit \`documentAnnotated\` and event \`documentEdited\`, then \`signRejected\`; the call counts as one change. ${VISUALS_DRAWN} Without that right, any of them is 403 FORBIDDEN naming the right, and nothing is written.`,
          ].join('\n\n'),
          body: RejectShareBody,
          response: withErrors({ 200: Success, 409: Type.Ref('ErrorBody') }),
        },
      },
      async (request) => answerSuccess(rejectShare(deps, recipientCallerOf(request), request.body)),
    );

    app.post(
      '/share/execute',
      {
        config: { auth: 'recipient' },
        schema: {
          tags: ['sharing'],
          operationId: 'executeShare',
          summary: 'Execute the share’s action: sign, approve, review, accept or execute (recipients)',
          description: [
            '`{id (documentId), action?, comment?}` records the simple action of the share (`documentSimpleActionExecuted`; audit `documentApproved`, `documentReviewed`, …) and passes the turn on. `action`, when given, must be the share’s own purpose (403 otherwise); a view or edit share owes nothing (400).',
            `Visuals: a sign share is executed by signing: \`signatures\` are required (400 without) and the call is PUT /share/document/sign/{version} on the current version (PUT /documents/sign/{version} for a user), with its answer, events (\`documentSigned\`, \`documentCompleted\` for the last) and audit. On an approve, review, accept or execute share, \`signatures\` close the recipient’s drawing with a PAdES signature made with the organisation key in their name (\`level\` or the tenant’s \`defaultPadesLevel\`; \`documentSigned\`, then \`documentSimpleActionExecuted\`), \`images\`/\`annotations\` alone annotate (\`documentEdited\`); the call counts as one change. ${VISUALS_DRAWN} A signature that completes the document seals it when \`sealOnComplete\` is on, as the sign call does.`,
          ].join('\n\n'),
          body: ExecuteShareBody,
          response: ActionAnswer,
        },
      },
      async (request) => executeShare(deps, recipientCallerOf(request), request.body),
    );

    app.post(
      '/share/consent',
      {
        config: { auth: 'recipient' },
        schema: {
          tags: ['sharing'],
          operationId: 'acceptConsent',
          summary: 'Accept the electronic-signature consent statement (recipients)',
          description: [
            '`{sha256}` (internal recipients add `id`, the document): the recipient accepts the consent statement GET /share/document answered as `consent` (`{text, language, sha256}`; the tenant words it per language with the property `consentStatements`, a built-in text otherwise). Recorded as the audit activity `consentAccepted` on the document, with the time, the caller’s address (`address`), `statementSha256`, `language` and `shareId`; the document’s audit trail, and the copy its seal on completion embeds, carry it. Answers `{accepted: true, acceptedAt}`.',
            'A `sha256` that is not the statement in force (it was reworded since it was read): 409 CONSENT_CHANGED, read the document again and show the new statement. A share whose turn has not come or that is not active: 409, as the other recipient actions; a link whose share ended: 401. The sign calls do not require a consent first: an integrator with its own page records consent its own way (the signer page always asks, just before signing).',
          ].join('\n\n'),
          body: ConsentBody,
          response: withErrors({
            200: Type.Object(
              {
                accepted: Type.Literal(true),
                acceptedAt: Type.String({ format: 'date-time', description: 'When it was recorded.' }),
              },
              { examples: [{ accepted: true, acceptedAt: '2026-12-06T10:15:00.000Z' }] },
            ),
            409: Type.Ref('ErrorBody'),
          }),
        },
      },
      async (request) =>
        acceptConsent(deps, recipientCallerOf(request), { ...request.body, address: request.ip }),
    );

    app.put(
      '/share/delegate',
      {
        config: { auth: 'recipient' },
        schema: {
          tags: ['sharing'],
          operationId: 'delegateShare',
          summary: 'Delegate a share to another external recipient',
          description:
            'Needs the share right `delegate`. Without `oauthFactors` the new recipient is checked by `email` only. An `emailCode` protection passes on (the code goes to the new recipient’s address); the password and phone do not. With `allowedOAuths` the new link is locked until the delegate proves their identity there (GET /share/oidc/{provider}).',
          body: DelegateBody,
          response: withErrors({
            200: withExamples(ShareObject, {
              ...SHARE_EXAMPLE,
              shareId: 'b8e2f4a1-3c6d-4e9f-a0b7-5d1c2e8f4a63',
              passwordRequired: false,
              isDelegated: true,
              sharedWith: ['jon@example.com'],
              privateMessage: 'Jon signs for our team while I am away.',
              oauthFactors: [{ type: 'email', value: 'jon@example.com' }],
              signatureFields: [{ ...SHARE_EXAMPLE.signatureFields[0], user: ['jon@example.com'] }],
            }),
            409: Type.Ref('ErrorBody'),
          }),
        },
      },
      async (request) => delegateShare(deps, recipientCallerOf(request), request.body),
    );
  };
}
