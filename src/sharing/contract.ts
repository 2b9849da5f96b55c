import { Type } from 'typebox';
import { DocumentId, SignatureField, SignEntity } from '../core/documents/document-contract.js';
import {
  EXAMPLE_IDS,
  EXAMPLE_VALID_UNTIL,
  POSITION_EXAMPLE,
  SIGNATURE_FIELD_EXAMPLE,
} from '../core/examples.js';
import { OAUTH_FACTOR_TYPES, PURPOSES, SHARE_RIGHTS } from '../core/sharing/share-types.js';
import {
  ImageEntrySchema,
  Level,
  SignatureEntrySchema,
  TextEntrySchema,
} from '../core/documents/visual-contract.js';

/**
 * What the sharing calls take: the schemas the routes check requests against (with their OpenAPI
 * descriptions and examples), from which the use cases' input types are made (`Static<>`).
 */

export const OAuthFactors = Type.Array(
  Type.Object(
    { type: Type.Enum([...OAUTH_FACTOR_TYPES]), value: Type.String({ minLength: 1, maxLength: 320 }) },
    { additionalProperties: false },
  ),
  { maxItems: 10 },
);
export const AllowedOAuths = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 20 });
export const Rights = Type.Array(Type.Enum([...SHARE_RIGHTS]), {
  uniqueItems: true,
  description:
    '`canAnnotateOnReject`: the recipient may draw notes when rejecting; `uploadFiles`: may attach files to the document; `freePlacement`: may draw outside the fields assigned to them (without it a recipient fills only their own fields, PUT /share/document/sign/{version}); `delegate`: may hand the share to someone else (PUT /share/delegate); `print` and `metadata` are kept and shown.',
});
export const Reminder = Type.Object(
  { start: Type.String({ format: 'date-time' }), intervalDays: Type.Integer({ minimum: 1, maximum: 365 }) },
  { additionalProperties: false },
);

/** One recipient of POST /share. */
export const RecipientData = Type.Object(
  {
    sharePurpose: Type.Enum([...PURPOSES], {
      description:
        '`view`: the recipient reads the document. `edit` (internal users): while the share lasts (active, `validUntil` not passed) the recipient changes the document like its owner (PUT /documents/{version}, /documents/edit/{version}, /documents/{id}/merge, /documents/annotate/{version}, attachments) and signs it (PUT /documents/sign/{version}); deleting, sharing, moving it between folders, transferring, sealing and its audit trail stay with the owner and administrators (403). `sign`, `execute`, `approve`, `review`, `accept`: the recipient owes that action (see POST /share/execute, PUT /share/document/sign/{version}, POST /inbox/action).',
    }),
    shareTo: Type.String({ minLength: 1, maxLength: 320 }),
    message: Type.Optional(Type.String({ maxLength: 5000 })),
    validUntil: Type.Optional(Type.String({ format: 'date-time' })),
    password: Type.Optional(Type.String({ minLength: 4, maxLength: 200 })),
    phone: Type.Optional(Type.String({ pattern: '^\\+?[0-9 ]{6,20}$' })),
    emailCode: Type.Optional(
      Type.Boolean({
        description:
          'External recipients only: the link stays locked until a one-time code sent by e-mail (POST /share/otp) is given to POST /share/unlock.',
      }),
    ),
    automaticReminder: Type.Optional(Reminder),
    oauthFactors: Type.Optional(OAuthFactors),
    allowedOAuths: Type.Optional(AllowedOAuths),
    order: Type.Optional(Type.Integer({ minimum: 0 })),
    rights: Type.Optional(Rights),
    language: Type.Optional(Type.String({ minLength: 2, maxLength: 10 })),
    dateFormat: Type.Optional(Type.String({ maxLength: 50 })),
    timeFormat: Type.Optional(Type.String({ maxLength: 50 })),
    isMandatory: Type.Optional(
      Type.Boolean({
        description:
          'Default true. false: the recipient may act but the document does not wait for them (not in `waitingFor`; their share becomes `notRequired` when the document completes).',
      }),
    ),
    userRoleId: Type.Optional(
      Type.Integer({ description: 'The recipient’s role: makes them a member of that sign entity.' }),
    ),
    userRoleName: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'The role by name, for entities without `userRoleId`.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** One edit of PUT /share: a field left out keeps its value, `null` removes it. */
export const ShareEditData = Type.Object(
  {
    shareId: Type.String({ minLength: 1, maxLength: 100 }),
    shareTo: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 320,
        description:
          'Moves the pending share to another recipient (a user’s login name or an e-mail address), as the removed PUT /share/{shareId}/recipient did: the old link and sessions stop working, the `email` factor follows the new recipient, the new recipient is invited now (a waiting share: when its turn comes), and the audit records `shareRecipientChanged` {shareId, from, to}. 409 when the new recipient already has a pending share of the document; 400 when it names a user while the share keeps a `password`, `phone` or `emailCode` (set them to null in the same edit).',
      }),
    ),
    validUntil: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
    message: Type.Optional(Type.String({ maxLength: 5000 })),
    password: Type.Optional(Type.Union([Type.String({ minLength: 4, maxLength: 200 }), Type.Null()])),
    phone: Type.Optional(Type.Union([Type.String({ pattern: '^\\+?[0-9 ]{6,20}$' }), Type.Null()])),
    emailCode: Type.Optional(
      Type.Boolean({
        description: '`true` asks for an e-mail code (as in POST /share), `false` stops asking.',
      }),
    ),
    oauthFactors: Type.Optional(OAuthFactors),
    allowedOAuths: Type.Optional(AllowedOAuths),
    automaticReminder: Type.Optional(Type.Union([Reminder, Type.Null()])),
    rights: Type.Optional(Rights),
    language: Type.Optional(Type.String({ minLength: 2, maxLength: 10 })),
  },
  { additionalProperties: false },
);

/**
 * The body of POST /share: the document, its recipients and fields; root `signatures`, `images`,
 * `annotations` and `level` are the sharer’s own.
 */
export const ShareBody = Type.Object(
  {
    id: DocumentId,
    type: Type.Optional(
      Type.String({
        maxLength: 200,
        description:
          'The document type (`documentType`, the Share’s `sharedObjectEsType`) of what `id` names, `folder` for a folder: when sent it must match (400 naming both).',
      }),
    ),
    objectType: Type.Optional(
      Type.Enum(['document', 'folder'], {
        description:
          '`document` (a folder is a special kind of document) or `folder` (then `id` must name a folder).',
      }),
    ),
    data: Type.Array(RecipientData, { minItems: 1, maxItems: 1000 }),
    signatureFields: Type.Optional(Type.Array(SignatureField, { maxItems: 1000 })),
    sequential: Type.Optional(Type.Boolean()),
    signEntities: Type.Optional(Type.Array(SignEntity, { maxItems: 100 })),
    signatures: Type.Optional(Type.Array(SignatureEntrySchema, { maxItems: 200 })),
    images: Type.Optional(Type.Array(ImageEntrySchema, { maxItems: 200 })),
    annotations: Type.Optional(Type.Array(TextEntrySchema, { maxItems: 200 })),
    level: Level,
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: EXAMPLE_IDS.documentId,
        data: [
          {
            sharePurpose: 'sign',
            shareTo: 'ivy@example.com',
            message: 'Please sign by Friday.',
            password: 'open-sesame',
            validUntil: EXAMPLE_VALID_UNTIL,
          },
        ],
        signatureFields: [SIGNATURE_FIELD_EXAMPLE],
      },
    ],
  },
);

/** The body of PUT /share: edits of pending shares, all or none. */
export const ShareEditsBody = Type.Object(
  { data: Type.Array(ShareEditData, { minItems: 1, maxItems: 1000 }) },
  {
    additionalProperties: false,
    examples: [{ data: [{ shareId: EXAMPLE_IDS.shareId, validUntil: EXAMPLE_VALID_UNTIL }] }],
  },
);

/** The body of POST /share/cancel. */
export const CancelSharingBody = Type.Object(
  { id: DocumentId, reason: Type.Optional(Type.String({ maxLength: 2000 })) },
  {
    additionalProperties: false,
    examples: [{ id: EXAMPLE_IDS.documentId, reason: 'The terms changed; a new version follows.' }],
  },
);

/** The body of POST /share/reminder: by document or by shares. */
export const RemindersBody = Type.Object(
  {
    documentId: Type.Optional(DocumentId),
    reminderType: Type.Optional(Type.Enum(['sms', 'email'])),
    shares: Type.Optional(
      Type.Array(
        Type.Object(
          {
            shareId: Type.String({ minLength: 1, maxLength: 100 }),
            phone: Type.Optional(Type.String({ pattern: '^\\+?[0-9 ]{6,20}$' })),
          },
          { additionalProperties: false },
        ),
        { minItems: 1, maxItems: 100 },
      ),
    ),
  },
  { additionalProperties: false, examples: [{ documentId: EXAMPLE_IDS.documentId }] },
);

/** The body of PUT /share/delegate: the new recipient and how they prove who they are. */
export const DelegateBody = Type.Object(
  {
    id: Type.Optional(DocumentId),
    shareTo: Type.String({ minLength: 3, maxLength: 320 }),
    message: Type.Optional(Type.String({ maxLength: 5000 })),
    oauthFactors: Type.Optional(OAuthFactors),
    allowedOAuths: Type.Optional(AllowedOAuths),
  },
  {
    additionalProperties: false,
    examples: [{ shareTo: 'jon@example.com', message: 'Jon signs for our team while I am away.' }],
  },
);

/** The body of POST /share/otp (optional): where the code goes. */
export const ShareCodeBody = Type.Optional(
  Type.Object(
    { channel: Type.Optional(Type.Enum(['sms', 'email'])) },
    { additionalProperties: false, examples: [{ channel: 'email' }] },
  ),
);

/** The body of POST /share/unlock: what the share’s protections ask. */
export const UnlockBody = Type.Object(
  {
    password: Type.Optional(Type.String({ maxLength: 200 })),
    otp: Type.Optional(Type.String({ maxLength: 20 })),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ password: 'open-sesame' }] },
);

/**
 * What the recipients' workflow calls may draw (POST /share/execute, PUT /share/reject and POST
 * /inbox/action): their own signature images, unused image uploads, text.
 */
export const ActionVisuals = {
  signatures: Type.Optional(
    Type.Array(SignatureEntrySchema, {
      maxItems: 200,
      description:
        'Signature entries, as in PUT /share/document/sign/{version}: signature and initials images the caller’s own (external recipients: POST /share/upload/signature|initials; users: POST /files/signature|initials, usable any number of times), stamps by id, positions 0..1.',
    }),
  ),
  images: Type.Optional(
    Type.Array(ImageEntrySchema, {
      maxItems: 200,
      description:
        'Image entries: each an unused upload (external recipients: POST /share/upload/file; users: POST /files/saveFile) or the document’s `barcode`; the same id several times in one request is one use. A refused call uses nothing up.',
    }),
  ),
  annotations: Type.Optional(Type.Array(TextEntrySchema, { maxItems: 200 })),
};
/**
 * What POST /share/execute takes besides the share and its action; POST /inbox/action, acting as it, the
 * same.
 */
export const ActionFields = {
  comment: Type.Optional(Type.String({ maxLength: 2000 })),
  ...ActionVisuals,
  level: Level,
};

/**
 * The body of PUT /share/reject: the document, a reason and, with the right `canAnnotateOnReject`, notes
 * drawn on it.
 */
export const RejectShareBody = Type.Object(
  { id: DocumentId, reason: Type.Optional(Type.String({ maxLength: 2000 })), ...ActionVisuals },
  {
    additionalProperties: false,
    examples: [{ id: EXAMPLE_IDS.documentId, reason: 'The fee in section 4 is not what we agreed.' }],
  },
);

/** The body of POST /share/execute: the share’s action, a comment and what the recipient draws or signs. */
export const ExecuteShareBody = Type.Object(
  {
    id: DocumentId,
    action: Type.Optional(Type.Enum(['sign', 'approve', 'review', 'accept', 'execute'])),
    ...ActionFields,
  },
  {
    additionalProperties: false,
    examples: [{ id: EXAMPLE_IDS.documentId, action: 'approve', comment: 'Approved for legal.' }],
  },
);

/** The body of POST /inbox/action: a share of the caller’s, the action and what it draws or signs. */
export const InboxActionBody = Type.Object(
  {
    shareId: Type.String({ minLength: 1, maxLength: 100 }),
    action: Type.Enum(['approve', 'review', 'accept', 'execute', 'reject', 'sign']),
    reason: Type.Optional(Type.String({ maxLength: 2000 })),
    ...ActionFields,
  },
  {
    additionalProperties: false,
    examples: [
      {
        shareId: EXAMPLE_IDS.shareId,
        action: 'sign',
        signatures: [
          { type: 'signature', blob: EXAMPLE_IDS.imageId, pages: [1], position: POSITION_EXAMPLE },
        ],
      },
    ],
  },
);

/** The body of POST /share/consent: the statement accepted, by its SHA-256 (GET /share/document `consent`). */
export const ConsentBody = Type.Object(
  {
    sha256: Type.String({
      pattern: '^[0-9A-Fa-f]{64}$',
      description: 'The `consent.sha256` of GET /share/document: the statement the recipient was shown.',
    }),
    id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'Internal recipients: the document whose share they consent for.',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ sha256: '6f1ed002ab5595859014ebf0951522d9e6b4b4b2a8f5e5b4c3e2f1d0c9b8a796' }],
  },
);
