import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { createShares } from '../../sharing/create-shares.js';
import { delegateShare } from '../../sharing/delegate-share.js';
import { listInbox } from '../../sharing/inbox.js';
import { cancelSharing, editShares, sendReminders } from '../../sharing/manage-shares.js';
import { sendShareCode, unlockShare } from '../../sharing/protect-share.js';
import { getSharedDocument } from '../../core/sharing/recipient-actions.js';
import { previewSharedDocument } from '../../sharing/preview-document.js';
import { signedCopyOf } from '../../sharing/download-signed-copy.js';
import { actFromInbox } from '../../signing/act-from-inbox.js';
import { executeShare } from '../../signing/execute-share.js';
import { rejectShare } from '../../signing/reject-share.js';
import { Unauthenticated } from '../../base/errors.js';
import { actorOf, recipientCallerOf } from '../authentication.js';
import { useMinified } from '../minified.js';
import { Bytes, StoredFileAnswers, SharedDocumentResult, ShareObject } from '../document-schemas.js';
import { DocumentId } from '../../core/documents/document-contract.js';
import { DOCUMENT_EXAMPLE, EXAMPLE_IDS, SHARE_EXAMPLE, SIGN_OUTCOME_EXAMPLE } from '../../core/examples.js';
import { SIGNING_WARNINGS } from './signing.js';
import {
  CancelSharingBody,
  DelegateBody,
  RemindersBody,
  ShareBody,
  ShareCodeBody,
  ShareEditsBody,
  UnlockBody,
} from '../../sharing/contract.js';
import { ExecuteShareBody, InboxActionBody, RejectShareBody } from '../../signing/contract.js';
import { Success, withErrors, withExamples } from '../schemas.js';
import { answerSuccess, sendStoredFile } from '../answers.js';

const ShareList = Type.Array(ShareObject, {
  description: 'The Share objects: one per recipient.',
  examples: [[SHARE_EXAMPLE]],
});

const VISUALS_DRAWN =
  'The entries are drawn as in PUT /share/document/sign/{version}, with its rules and messages (400 VALIDATION_ERROR `"signatures[0].position.percentX" must be less than or equal to 1`, 400 FILE_NOT_USABLE naming the field); the main file gets a new id and the old one stays a revision. On any error nothing is written and no file is used up.';
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
const ActionAnswer = withErrors({ 200: ActionOutcome, 409: Type.Ref('ErrorBody') });

/** Sharing and the recipients' actions. */
export function sharingRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    useMinified(app);
    app.post(
      '/share',
      {
        schema: {
          tags: ['sharing'],
          summary: 'Share a document',
          description: [
            'Recipients in `data` (each once): a user’s login name or an e-mail address (external). A sign share moves the document to `inprogress`. With `sequential`, recipients act one after another by `order` (default: their place in `data`). `signatureFields[*].user` must be recipients of this call; a field without `user` but with `userRoleId`/`userRoleName` goes to every recipient of that role. External recipients get a link `PUBLIC_URL/s/<token>` by e-mail; that token is their `token` on the recipient endpoints. A link has no power once its share ended (`validUntil` passed, cancelled, rejected, delegated, not required, document deleted): 401 UNAUTHENTICATED, and `/s/<token>` shows a page saying so; after acting, the recipient only downloads what they signed (GET /share/signed) for RECIPIENT_DOWNLOAD_DAYS.',
            'Protection of external recipients: `password`, `phone` (SMS one-time code), `emailCode` and `allowedOAuths` (identity providers) each lock the link (403 MFA_REQUIRED) for everyone who holds it, for good: passing them answers a recipient session (POST /share/unlock), which acts instead of the link. All that are set must be passed: first the identity provider (GET /share/oidc/{provider}, then POST /share/unlock for a password or code). `oauthFactors` default to `email`; an `email` factor must match the recipient; other factors (`phoneNumber`, `emiratesId`) need `allowedOAuths` to be exactly ["uaePass"] (the national digital identity provider). The identity provider’s claims must prove every factor (`email` with `email_verified`, `phoneNumber` as `phone_number`, `emiratesId` as the claim the provider’s `claims.emiratesId` names). `allowedOAuths` names providers of OIDC_PROVIDERS, matched ignoring case (`uaePass` is the provider named `uaepass`); a name that is not configured is 400 naming it (it could never be passed); each Share object lists the configured ones it offers in `identityProviders`.',
            'Sign entities (as templates store them): root `signEntities` `[{type:"user", quorum?, userRoleId?, userRoleName?, shareType?:"sign", order?}]` group the sign recipients by role: a recipient with `userRoleId` (or, for an entity without an id, `userRoleName`) is a member of that entity. An entity is satisfied when `quorum` of its members have signed (default: all of them); its other members’ shares then stop being awaited: their `status` becomes `notRequired`, they leave `waitingFor`, get no reminders and can no longer sign (their link has ended: 401; an internal member is no longer a signer of the document: 403). The document is `completed` when every entity is satisfied and every sign recipient outside the entities has signed. In a sequence, members without their own `order` take the entity’s `order`, so they act together and the turn passes once the quorum is in. A rejection by any member still rejects the document. 400 when an entity has no `userRoleId`/`userRoleName`, repeats a role, has no member, has a `quorum` above its member count, or when a recipient names a role no entity has or is a member without `sharePurpose` sign. Each member’s Share object carries `userRoleId`/`userRoleName` and `quorum`. Without `signEntities` roles are only recorded and every sign recipient signs.',
            `The sharer signs and shares in one step: root \`signatures\`, \`images\`, \`annotations\` (and \`level\`) are the sharer’s, as in PUT /documents/sign/{version} and /annotate/{version}: signature and initials images from POST /files/signature|initials, \`images\` unused uploads from POST /files/saveFile or the document’s \`barcode\`, stamps by id, positions 0..1. With \`signatures\` the main file is signed with the organisation key in the sharer’s name (PAdES) before the shares go out, so recipients get the signed file; \`images\`/\`annotations\` alone annotate it. It is one change (\`_version\` bumped once; \`documentSigned\` then \`signRequest\`); on any error (a position above 1, a used file, ...) nothing is written: no share, no mail, no file used up.`,
            'Imported fields (custom fields shown to the recipient): an `annotation` field whose `config` is the JSON string `{"importedField":"<customField key>"}` shows that custom field of the document: the field is shown read-only with the value as its `text` (and `importedField: {key, displayName, type}`) in the Share objects and in GET /share/document, and when its recipient signs the value is written at the field’s place in their revision, as `readOnly` fields with a predefined `text` are. A key the document does not have is 400 (`"signatureFields[i].config" importedField must be one of the document\'s custom field keys [...]`).',
            'The workflow: a sign share moves the document to `inprogress` from any state, also `completed`, `cancelled`, `rejected` or `expired`: a new round on the current file, earlier signatures stay. The document is `completed` when no mandatory action (sign, approve, review, accept, execute) is pending; a recipient with `isMandatory: false` may act but is never waited for (not in `waitingFor`; still pending at completion, their share becomes `notRequired`). Only a mandatory action share whose `validUntil` passes expires the process (`signExpired`, the share named in the audit); any other share (a view share, an optional action) expires alone (audit `shareExpired`). `automaticReminder` applies to sign, approve and review shares, while the document is in progress.',
            'Signature fields: each gets its own `fieldId` (`fld_…`, the same in every Share object the field goes to), since `customId` may be empty: a required text field is answered in the sign call by an `annotations` entry whose `fieldId` is the field’s `fieldId` (or its `customId`), a required `annotation_submitted_file` field by POST /share/upload/submittedFile with that `fieldId`. A share whose fields could not be completed is 400 naming the field: `pages` beyond the document’s page count; a `required` field none of whose recipients can answer it (signature-like and text fields need a sign recipient, file fields a recipient owing an action); a `required` stamp or image field (the signer’s page cannot ask for one).',
            'Field types: `annotation` fields ask for a value of a kind by `subtype`, with settings in `config` (JSON in a string). `annotation_date`: a date written in the recipient’s `dateFormat` (day `d`/`dd`, month `M`/`MM`, year `yy`/`yyyy` and separators, such as `dd.MM.yyyy`; default `yyyy-MM-dd`), a predefined `text` in it prefills the field. `annotation_checkbox`: `"true"` or `"false"`, a required box must be checked, a checked one is written as `X`. `annotation_select`: options from `config` `{"options":["A",{"value":"b","label":"B"}]}` or `{"enum":"<name>"}` (an enum of your organization, GET /enums/{name}); they are copied into the field as `options: [{value, label}]`, the answer is a `value` and its `label` is written. `annotation_number`: a number such as `1250` or `-12.5`, `config` `{"min", "max", "decimals"}`. `initials` fields are signed with a `signatures` entry of type `initials` (required ones must be). 400 naming the field for what the signer’s page could not show: a select without options or with an unknown enum, a number field with `min` above `max` or `decimals` not a whole number from 0 to 10, a date field whose recipient’s `dateFormat` is not made of day, month and year numbers or whose `text` is not a date in it.',
            'Answers the Share objects, each with the recipient’s `signatureFields` (with their `fieldId`).',
          ].join('\n\n'),
          body: ShareBody,
          response: withErrors({ 200: ShareList, 413: Type.Ref('ErrorBody') }),
        },
      },
      async (request) => createShares(deps, actorOf(request), request.body),
    );

    app.put(
      '/share',
      {
        schema: {
          tags: ['sharing'],
          summary: 'Edit pending shares',
          description:
            '`data`: up to 100 edits, all or none, by the document owner or original sharer; `oauthFactors` follow the rules of POST /share. A field left out keeps its value, `null` removes it: no edit weakens a protection (`password`, `phone`, `emailCode`, `allowedOAuths`, `oauthFactors`, `validUntil`) it does not name. Naming `password`, `phone`, `emailCode`, `oauthFactors` or `allowedOAuths` ends the recipient’s sessions: they unlock again (POST /share/unlock); with changed factors or providers an identity proven before must be proven anew (GET /share/oidc/{provider}). `allowedOAuths` must name configured identity providers (OIDC_PROVIDERS; 400 naming the value otherwise). `automaticReminder` schedules reminders for sign, approve and review shares only. `shareTo` moves the share to another recipient: replaces PUT /share/{shareId}/recipient (removed).',
          body: ShareEditsBody,
          response: withErrors({ 200: ShareList, 413: Type.Ref('ErrorBody') }),
        },
      },
      async (request) => editShares(deps, actorOf(request), request.body.data),
    );

    app.post(
      '/share/cancel',
      {
        schema: {
          tags: ['sharing'],
          summary: 'Cancel the signing process (owner)',
          description:
            'The document owner (or an administrator) withdraws a document in progress: it becomes `cancelled`, every pending share ends and `signCancelled` is sent.',
          body: CancelSharingBody,
          response: withErrors({ 200: Success, 409: Type.Ref('ErrorBody') }),
        },
      },
      async (request) => answerSuccess(cancelSharing(deps, actorOf(request), request.body)),
    );

    app.post(
      '/share/reminder',
      {
        schema: {
          tags: ['sharing'],
          summary: 'Send reminders',
          description:
            'By document (`documentId`: every eligible recipient) or by shares (`reminderType` sms|email, `shares:[{shareId, phone}]`). An external recipient’s reminder carries a new link; the links of the invitation and earlier reminders keep working while the share is live, and all end with it. Only pending sign, approve and review shares; only the owner or the original sharer (403); one per day per share (429 REMINDER_TOO_SOON with Retry-After); SMS only with the SMS add-on.',
          body: RemindersBody,
          response: withErrors({
            200: Type.Object(
              {
                status: Type.Literal('SUCCESS'),
                reminded: Type.Integer({ description: 'Recipients reminded.' }),
              },
              { examples: [{ status: 'SUCCESS', reminded: 1 }] },
            ),
          }),
        },
      },
      async (request) => ({
        status: 'SUCCESS' as const,
        ...(await sendReminders(deps, actorOf(request), request.body)),
      }),
    );

    app.get(
      '/share/document',
      {
        config: { auth: 'recipient' },
        schema: {
          tags: ['sharing'],
          summary: 'The shared document (recipients)',
          description:
            'With the share-link token: that share’s document, answered like GET /documents/:id (public attachments only), while the share is live; once it ended, 401; once the recipient acted, 403 (GET /share/signed downloads what they signed). Internal recipients pass `id`.',
          querystring: Type.Object({ id: Type.Optional(DocumentId) }, { additionalProperties: false }),
          response: withErrors({
            200: Type.Object(
              { results: Type.Array(SharedDocumentResult) },
              {
                description:
                  'The document, in a list of one, with the recipient’s `share` and `signatureFields`.',
                examples: [
                  {
                    results: [
                      {
                        ...DOCUMENT_EXAMPLE,
                        _version: 2,
                        workflow: { workflowType: 'wf_archive', shareStateName: 'inprogress' },
                        waitingFor: ['ivy@example.com'],
                        signatureFields: SHARE_EXAMPLE.signatureFields,
                        share: SHARE_EXAMPLE,
                      },
                    ],
                  },
                ],
              },
            ),
          }),
        },
      },
      async (request) => ({
        results: [await getSharedDocument(deps, recipientCallerOf(request), request.query.id)],
      }),
    );

    app.get(
      '/share/document/preview',
      {
        config: { auth: 'recipient' },
        schema: {
          tags: ['sharing'],
          summary: 'The shared document’s first page as an image (recipients)',
          description:
            'The first page of the document’s PDF as it is now, drawn as a WebP image 640 px wide: something to show while a PDF viewer loads. Who may call it is who may call GET /share/document (internal recipients pass `id`). Answered with an `ETag`; `If-None-Match` with it answers 304 while the PDF is unchanged. 404 when the page cannot be drawn (a PDF over 32 MB, one that takes too long to draw, or while the server is busy drawing others): show the PDF itself.',
          querystring: Type.Object({ id: Type.Optional(DocumentId) }, { additionalProperties: false }),
          response: withErrors({
            200: Bytes('The first page, as a WebP image.', 'image/webp'),
            304: Type.Null({ description: 'The copy tagged `If-None-Match` is still the first page.' }),
          }),
        },
      },
      async (request, reply) => {
        const preview = await previewSharedDocument(deps, recipientCallerOf(request), request.query.id);
        const etag = `"preview-${preview.tag}"`;
        // Kept by no browser (a contract's page on a shared computer's disk), like the page's other
        // reads; a client keeping its own copy revalidates it with the tag, at no cost in bytes.
        void reply.header('cache-control', 'private, no-store').header('etag', etag);
        if (request.headers['if-none-match'] === etag) return reply.status(304).send(null);
        return reply
          .header('content-type', preview.contentType)
          .header('content-length', preview.image.byteLength)
          .send(Buffer.from(preview.image.buffer, preview.image.byteOffset, preview.image.byteLength));
      },
    );

    app.get(
      '/share/signed',
      {
        config: { auth: 'recipient', signedCopies: true },
        schema: {
          tags: ['sharing'],
          summary: 'Download what you signed (external recipients)',
          description:
            'With the share-link token (any link the recipient received for the share) or a recipient session, once the recipient acted (signed, approved, …): the document as their round left it (their signature, those after it and the seal on completion; never a later round’s file), as a PDF attachment. It works for RECIPIENT_DOWNLOAD_DAYS (default 30) after they acted, and is then the only thing the link or session does: every other recipient endpoint answers 403, and /files/loadFile/hash serves only the files of that round (earlier revisions included). Afterwards, and for a share that ended otherwise, 401 UNAUTHENTICATED. Before the recipient acted: 409.',
          response: withErrors({
            200: Bytes(
              "The signed PDF, with `X-Content-Type-Options: nosniff`, `Content-Security-Policy: sandbox; default-src 'none'` and `Content-Disposition: attachment`.",
            ),
            ...StoredFileAnswers,
            409: Type.Ref('ErrorBody'),
          }),
        },
      },
      async (request, reply) => {
        if (!request.recipient) throw new Unauthenticated('Send the share-link token');
        return sendStoredFile(deps, reply, await signedCopyOf(deps, request.recipient), 'attachment');
      },
    );

    app.put(
      '/share/reject',
      {
        config: { auth: 'recipient' },
        schema: {
          tags: ['sharing'],
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

    app.put(
      '/share/delegate',
      {
        config: { auth: 'recipient' },
        schema: {
          tags: ['sharing'],
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

    app.post(
      '/share/otp',
      {
        config: { auth: 'recipient-locked' },
        schema: {
          tags: ['sharing'],
          summary: 'Send a one-time code (external recipients)',
          description:
            'By SMS when the share has a phone, else by e-mail (`channel` to choose). Valid 10 minutes. A share that is not protected by a code (a password only, or nothing) answers 400: a code could not unlock it.',
          body: ShareCodeBody,
          response: withErrors({
            200: Type.Object(
              {
                status: Type.Literal('SUCCESS'),
                channel: Type.Enum(['sms', 'email'], { description: 'Where the code went.' }),
              },
              { examples: [{ status: 'SUCCESS', channel: 'email' }] },
            ),
          }),
        },
      },
      async (request) => {
        if (!request.recipient) throw new Unauthenticated('Send the share-link token');
        return {
          status: 'SUCCESS' as const,
          ...(await sendShareCode(deps, request.recipient, request.body ?? {})),
        };
      },
    );

    app.post(
      '/share/unlock',
      {
        config: { auth: 'recipient-locked' },
        schema: {
          tags: ['sharing'],
          summary: 'Unlock a protected share (external recipients)',
          description: [
            '`{password}` and/or `{otp}` as the share requires, with the share-link token. Answers `{status:"SUCCESS", token}`: `token` is a recipient session, bound to this unlock, accepted wherever the link token is (every recipient endpoint, the document’s files through /files/loadFile/hash, share uploads) and valid RECIPIENT_SESSION_MINUTES (default 60) after its last use; it ends with the share (rejected, cancelled, expired, delegated, deleted: 401, as the link does) or when the sharer changes its protections (401 afterwards: open the link again). Once the recipient acted it only downloads what they signed (GET /share/signed, for RECIPIENT_DOWNLOAD_DAYS; 403 elsewhere). The link itself stays locked (403 MFA_REQUIRED) for everyone who holds it, so a forwarded mail opens nothing; keep the session for the browser tab only.',
            '5 wrong attempts lock the share for LOGIN_WINDOW_SECONDS (429 RATE_LIMITED with Retry-After), counted with refused identity-provider sign-ins; each attempt is counted before its password or code is checked, so parallel attempts count too. A code works once, even for parallel requests. A share with `allowedOAuths` is unlocked by proving the recipient’s identity with one of them (GET /share/oidc, GET /share/oidc/{provider}), which gives a session of its own; until then this call answers 403 MFA_REQUIRED. When such a share also has a password or code, call this with that session’s token: it answers a new session that passed them all. A share that is over: 409.',
          ].join('\n\n'),
          body: UnlockBody,
          response: withErrors({
            200: Type.Object(
              {
                status: Type.Literal('SUCCESS'),
                token: Type.String({
                  description: 'The recipient session: send it as `token` instead of the link from now on.',
                }),
              },
              { examples: [{ status: 'SUCCESS', token: EXAMPLE_IDS.recipientSession }] },
            ),
            409: Type.Ref('ErrorBody'),
          }),
        },
      },
      async (request) => {
        if (!request.recipient) throw new Unauthenticated('Send the share-link token');
        return { status: 'SUCCESS' as const, ...(await unlockShare(deps, request.recipient, request.body)) };
      },
    );

    app.get(
      '/inbox',
      {
        schema: {
          tags: ['sharing'],
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
