import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { createShares } from '../../sharing/create-shares.js';
import { cancelSharing, editShares, sendReminders } from '../../sharing/manage-shares.js';
import { actorOf } from '../authentication.js';
import { postBody } from '../route-shapes.js';
import { useMinified } from '../minified.js';
import { ShareObject } from '../document-schemas.js';
import { SHARE_EXAMPLE } from '../../core/examples.js';
import { CancelSharingBody, RemindersBody, ShareBody, ShareEditsBody } from '../../sharing/contract.js';
import { Success, withErrors } from '../schemas.js';
import { answerSuccess } from '../answers.js';

const ShareList = Type.Array(ShareObject, {
  description: 'The Share objects: one per recipient.',
  examples: [[SHARE_EXAMPLE]],
});

/** Sharing a document and managing its shares: the sharer's calls. */
export function sharingRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    useMinified(app);
    postBody(app, deps, {
      path: '/share',
      tag: 'sharing',
      operationId: 'createShare',
      summary: 'Share a document',
      description: [
        'Recipients in `data` (each once): a user’s login name or an e-mail address (external). A sign share moves the document to `inprogress`. With `sequential`, recipients act one after another by `order` (default: their place in `data`). `signatureFields[*].user` must be recipients of this call; a field without `user` but with `userRoleId`/`userRoleName` goes to every recipient of that role. External recipients get a link `PUBLIC_URL/s/<token>` by e-mail; that token is their `token` on the recipient endpoints. A link has no power once its share ended (`validUntil` passed, cancelled, rejected, delegated, not required, document deleted): 401 UNAUTHENTICATED, and `/s/<token>` shows a page saying so; after acting, the recipient only downloads what they signed (GET /share/signed) for RECIPIENT_DOWNLOAD_DAYS.',
        'Protection of external recipients: `password`, `phone` (SMS one-time code), `emailCode` and `allowedOAuths` (identity providers) each lock the link (403 MFA_REQUIRED) for everyone who holds it, for good: passing them answers a recipient session (POST /share/unlock), which acts instead of the link. All that are set must be passed: first the identity provider (GET /share/oidc/{provider}, then POST /share/unlock for a password or code). `oauthFactors` default to `email`; an `email` factor must match the recipient; other factors (`phoneNumber`, `emiratesId`) need `allowedOAuths` to be exactly ["uaePass"] (the national digital identity provider). The identity provider’s claims must prove every factor (`email` with `email_verified`, `phoneNumber` as `phone_number`, `emiratesId` as the claim the provider’s `claims.emiratesId` names). `allowedOAuths` names providers of OIDC_PROVIDERS, matched ignoring case (`uaePass` is the provider named `uaepass`); a name that is not configured is 400 naming it (it could never be passed); each Share object lists the configured ones it offers in `identityProviders`.',
        'Sign entities (as templates store them): root `signEntities` `[{type:"user", quorum?, userRoleId?, userRoleName?, shareType?:"sign", order?}]` group the sign recipients by role: a recipient with `userRoleId` (or, for an entity without an id, `userRoleName`) is a member of that entity. An entity is satisfied when `quorum` of its members have signed (default: all of them); its other members’ shares then stop being awaited: their `status` becomes `notRequired`, they leave `waitingFor`, get no reminders and can no longer sign (their link has ended: 401; an internal member is no longer a signer of the document: 403). The document is `completed` when every entity is satisfied and every sign recipient outside the entities has signed. In a sequence, members without their own `order` take the entity’s `order`, so they act together and the turn passes once the quorum is in. A rejection by any member still rejects the document. 400 when an entity has no `userRoleId`/`userRoleName`, repeats a role, has no member, has a `quorum` above its member count, or when a recipient names a role no entity has or is a member without `sharePurpose` sign. Each member’s Share object carries `userRoleId`/`userRoleName` and `quorum`. Without `signEntities` roles are only recorded and every sign recipient signs.',
        `The sharer signs and shares in one step: root \`signatures\`, \`images\`, \`annotations\` (and \`level\`) are the sharer’s, as in PUT /documents/sign/{version} and /annotate/{version}: signature and initials images from POST /files/signature|initials, \`images\` unused uploads from POST /files/saveFile or the document’s \`barcode\`, stamps by id, positions 0..1. With \`signatures\` the main file is signed with the organisation key in the sharer’s name (PAdES) before the shares go out, so recipients get the signed file; \`images\`/\`annotations\` alone annotate it. It is one change (\`_version\` bumped once; \`documentSigned\` then \`signRequest\`); on any error (a position above 1, a used file, ...) nothing is written: no share, no mail, no file used up.`,
        'Imported fields (custom fields shown to the recipient): an `annotation` field whose `config` is the JSON string `{"importedField":"<customField key>"}` shows that custom field of the document: the field is shown read-only with the value as its `text` (and `importedField: {key, displayName, type}`) in the Share objects and in GET /share/document, and when its recipient signs the value is written at the field’s place in their revision, as `readOnly` fields with a predefined `text` are. A key the document does not have is 400 (`"signatureFields[i].config" importedField must be one of the document\'s custom field keys [...]`).',
        'The workflow: a sign share moves the document to `inprogress` from any state, also `completed`, `cancelled`, `rejected` or `expired`: a new round on the current file, earlier signatures stay. The document is `completed` when no mandatory action (sign, approve, review, accept, execute) is pending; a recipient with `isMandatory: false` may act but is never waited for (not in `waitingFor`; still pending at completion, their share becomes `notRequired`). Only a mandatory action share whose `validUntil` passes expires the process (`signExpired`, the share named in the audit); any other share (a view share, an optional action) expires alone (audit `shareExpired`). `automaticReminder` applies to sign, approve and review shares, while the document is in progress.',
        'Signature fields: each gets its own `fieldId` (`fld_…`, the same in every Share object the field goes to), since `customId` may be empty: a required text field is answered in the sign call by an `annotations` entry whose `fieldId` is the field’s `fieldId` (or its `customId`), a required `annotation_submitted_file` field by POST /share/upload/submittedFile with that `fieldId`. A share whose fields could not be completed is 400 naming the field: `pages` beyond the document’s page count; a `required` field none of whose recipients can answer it (signature-like and text fields need a sign recipient, file fields a recipient owing an action); a `required` stamp or image field (the signer’s page cannot ask for one). A field goes only to recipients the signer page shows it to: signers, and for an `annotation_submitted_file` field anyone owing an action (an approver submits their file before approving); a field given to a recipient who views, edits, approves, reviews, accepts or executes is 400 naming it. What a signer is given is what the signer page shows them: `signature` fields (and `wacom`, shown and signed as a signature), `initials`, `stamp` and `image` (optional ones), and `annotation` fields: text (`annotation_generic`, or any other subtype), `annotation_date`, `annotation_checkbox`, `annotation_select`, `annotation_number`, read-only ones (a predefined `text`, or an imported custom field) and `annotation_submitted_file`. Recipients fill only their own fields: answers name them by `fieldId`, and drawing elsewhere needs the share right `freePlacement` (PUT /share/document/sign/{version}).',
        'Field types: `annotation` fields ask for a value of a kind by `subtype`, with settings in `config` (JSON in a string). `annotation_date`: a date written in the recipient’s `dateFormat` (day `d`/`dd`, month `M`/`MM`, year `yy`/`yyyy` and separators, such as `dd.MM.yyyy`; default `yyyy-MM-dd`), a predefined `text` in it prefills the field. `annotation_checkbox`: `"true"` or `"false"`, a required box must be checked, a checked one is written as `X`. `annotation_select`: options from `config` `{"options":["A",{"value":"b","label":"B"}]}` or `{"enum":"<name>"}` (an enum of your organization, GET /enums/{name}); they are copied into the field as `options: [{value, label}]`, the answer is a `value` and its `label` is written. `annotation_number`: a number such as `1250` or `-12.5`, `config` `{"min", "max", "decimals"}`. `initials` fields are signed with a `signatures` entry of type `initials` (required ones must be). 400 naming the field for what the signer’s page could not show: a select without options or with an unknown enum, a number field with `min` above `max` or `decimals` not a whole number from 0 to 10, a date field whose recipient’s `dateFormat` is not made of day, month and year numbers or whose `text` is not a date in it.',
        '`type`, when sent, must be the document type of what `id` names (`documentType`; `folder` for a folder), else 400 naming both. Each Share object answers the `language`, `dateFormat` and `timeFormat` in use: as sent, or the defaults `en`, `yyyy-MM-dd` and `HH:mm:ss`.',
        'Sharing a folder (access to a folder is inherited by what it holds): `id` names a folder you manage, and `data` holds users of the tenant (login name or e-mail; external recipients get a share of a document instead) or groups (an organization of the tenant by id or name, as POST /groups/search lists them; global and super administrators name any, others only their own) with `sharePurpose` `view` (read-only) or `edit` (edit rights: change the documents in it and add documents and folders to it), optionally `message` and `validUntil`. While the share is active the user (every member of the group, also those who join later) sees the folder and everything in it — its documents and nested folders at any depth, also those added later — on every read path (GET /documents/{id}, GET /folders/{id}, POST /search, downloads, attachments, revisions, verification); what they may not see stays 404. POST /share/cancel with the folder’s id ends its shares, and the access inherited through them, at once; `validUntil` ends one when it passes. A folder share sends no mail and owes no action, so the other purposes and what only a document share carries (protections, reminders, fields, signing in the call, `sequential`, `rights`, formats) are refused with 400 naming the field. Its Share objects have `sharedObjectType` `folder`, and a group’s its `groupId`.',
        'Answers the Share objects, each with the recipient’s `signatureFields` (with their `fieldId`).',
      ].join('\n\n'),
      body: ShareBody,
      answers: { 200: ShareList, 413: Type.Ref('ErrorBody') },
      call: createShares,
    });

    app.put(
      '/share',
      {
        schema: {
          tags: ['sharing'],
          operationId: 'editShares',
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
          operationId: 'cancelSigning',
          summary: 'Cancel the signing process (owner)',
          description:
            'The document owner (or an administrator) withdraws a document in progress: it becomes `cancelled`, every pending share ends and `signCancelled` is sent. With a folder’s id: ends every active share of the folder (status `cancelled`), and its users lose at once the access they had through it to the folder and everything in it.',
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
          operationId: 'sendReminders',
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
  };
}
