import { Type } from 'typebox';
import { DocumentId } from '../core/documents/document-contract.js';
import { EXAMPLE_IDS, POSITION_EXAMPLE } from '../core/examples.js';
import {
  ImageEntrySchema,
  Level,
  SignatureEntrySchema,
  TextEntrySchema,
} from '../core/signing/visual-contract.js';

/**
 * What the signing calls take: the schemas the routes check requests against (with their OpenAPI
 * descriptions and examples), from which the use cases' input types are made (`Static<>`).
 */

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
/** What POST /share/execute takes besides the share and its action; POST /inbox/action, acting as it, the same. */
export const ActionFields = {
  comment: Type.Optional(Type.String({ maxLength: 2000 })),
  ...ActionVisuals,
  level: Level,
};

/** The body of PUT /share/reject: the document, a reason and, with the right `canAnnotateOnReject`, notes drawn on it. */
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
