import { Type, type TSchema } from 'typebox';
import { DOCUMENT_EXAMPLE, FILE_RECORD_EXAMPLE, SHARE_EXAMPLE } from '../core/examples.js';
import { SignatureField } from '../core/documents/document-contract.js';
import { STORED_FILE_TYPES } from './answers.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const AttachmentResult = Type.Object(
  {
    content: Type.String({ description: 'The file id (GET /files/loadFile/hash/{hash}).' }),
    documentname: Type.String(),
    mimetype: Type.String(),
    size: Type.Integer(),
    public: Type.Boolean({ description: 'Shown to external recipients.' }),
    field: Type.Optional(
      Type.String({ description: 'A submitted file: the signature field (`fieldId`) it answers.' }),
    ),
  },
  { additionalProperties: true },
);

/** A document as every answer shows it (GET /documents/{id}, searches, the create and change calls). */
const DocumentProperties = {
  documentId: Type.String(),
  documentTitle: Type.String(),
  documentType: Type.String({ description: 'Its document definition (`d_default` unless chosen).' }),
  definitionType: Nullable(Type.String()),
  pdfFile: Type.Optional(
    Type.Object(
      {
        content: Type.String({
          description:
            'The id of the current main file: download it with GET /files/loadFile/hash/{content}. Every signature makes a new one, so read it again after signing.',
        }),
        mimetype: Type.String(),
        size: Type.Integer(),
        pages: Type.Optional(Type.Integer()),
      },
      { additionalProperties: true },
    ),
  ),
  file: Type.Optional(
    Type.Array(AttachmentResult, { description: 'Attachments (shown with the right `view_attachments`).' }),
  ),
  submittedFiles: Type.Array(AttachmentResult, { description: 'Files recipients submitted for fields.' }),
  customTemplate: Nullable(Type.String()),
  customFields: Type.Array(
    Type.Object(
      {
        key: Type.String(),
        displayName: Type.Optional(Type.String()),
        type: Type.String(),
        value: Type.Union([Type.String(), Type.Number()]),
      },
      { additionalProperties: true },
    ),
  ),
  barcode: Nullable(
    Type.String({ description: 'File id of the QR code (PNG) pointing at its verification.' }),
  ),
  _version: Type.Integer({ description: 'Send it in the path of change calls; a stale one answers 409.' }),
  isSigned: Type.Boolean(),
  workflow: Type.Object(
    {
      workflowType: Type.String(),
      shareStateName: Type.Optional(
        Type.String({
          description:
            '`inprogress`, `completed`, `cancelled`, `rejected` or `expired`; absent before any share.',
        }),
      ),
    },
    { additionalProperties: true },
  ),
  folder: Type.Optional(
    Type.Object({
      global: Type.Object({ level: Type.Integer(), parentFolderId: Type.String(), name: Type.String() }),
    }),
  ),
  owner: Type.String({ description: 'Login name of the owner.' }),
  createName: Type.Object({ id: Type.String(), name: Type.String() }),
  createDate: Type.String(),
  modifyDate: Type.String(),
  waitingFor: Type.Array(Type.String(), {
    description: 'The recipients (login name or e-mail) who still owe an action, in order.',
  }),
};

export const DocumentResult = Type.Object(DocumentProperties, {
  additionalProperties: true,
  description: 'A document (or folder).',
  examples: [DOCUMENT_EXAMPLE],
});

/** A signature field as a share shows it: with its own `fieldId`, and the value of an imported field. */
export const SignatureFieldResult = Type.Object(
  {
    ...SignatureField.properties,
    fieldId: Type.String({ description: 'The field’s id (`fld_…`): answer the field with it.' }),
    text: Type.Optional(Type.String()),
    readOnly: Type.Optional(Type.Boolean()),
    importedField: Type.Optional(
      Type.Object({ key: Type.String(), displayName: Type.String(), type: Type.String() }),
    ),
  },
  { additionalProperties: true },
);

/** A share: one recipient's part in a document's workflow. */
export const ShareObject = Type.Object(
  {
    shareId: Type.String(),
    isActive: Type.Boolean(),
    isPermanentViewToken: Type.Boolean(),
    messageRead: Type.Boolean(),
    passwordRequired: Type.Boolean(),
    otpEnabled: Type.Boolean(),
    sequential: Type.Boolean(),
    isDelegated: Type.Boolean(),
    delegatedBy: Type.Optional(
      Type.String({ description: 'To the recipient of a delegated share: who passed it on to them.' }),
    ),
    sendAttachmentsOnComplete: Type.Boolean(),
    isMandatory: Type.Boolean(),
    tokenGenerated: Type.Boolean(),
    shareDate: Type.String(),
    validUntil: Nullable(Type.String()),
    shareType: Type.String({
      description: 'The purpose: view, edit, sign, execute, approve, review, accept.',
    }),
    status: Type.String({
      description:
        '`active` (owes its action), `waiting` (its turn has not come), `done`, `rejected`, `delegated`, `cancelled`, `expired`, `notRequired`.',
    }),
    sharedBy: Type.String({ description: 'The sharer’s login name.' }),
    sharedUsername: Type.String({ description: 'The sharer’s login name.' }),
    sharedByDisplayName: Type.String({
      description: 'The name the sharer shows: their display name, else their login name.',
    }),
    sharedObjectEsId: Type.String({ description: 'The document id.' }),
    sharedObjectEsType: Type.String({ description: 'The document type.' }),
    sharedObjectType: Type.Enum(['document', 'folder'], {
      description: '`folder` for a share of a folder: its content inherits it.',
    }),
    sharedWith: Type.Array(Type.String()),
    groupId: Type.Optional(
      Type.String({
        description: 'A folder shared with a group: the organization’s id (`sharedWith` holds its name).',
      }),
    ),
    otpPhone: Type.Optional(Type.String({ description: 'The SMS number, masked.' })),
    privateMessage: Type.String(),
    language: Type.String({
      description:
        'The language of the recipient’s mails and page, as sent; `en` when POST /share sent none.',
    }),
    shareGroup: Type.String({ description: 'The shares made by one call share it.' }),
    rights: Type.Array(Type.String()),
    dateFormat: Type.String({
      description:
        'The pattern date fields are written in, as sent; `yyyy-MM-dd` when POST /share sent none.',
    }),
    timeFormat: Type.String({
      description:
        'The time pattern, as sent; `HH:mm:ss` when POST /share sent none (the time drawn under a signature is UTC to the second).',
    }),
    order: Type.Integer(),
    oauthFactors: Type.Array(Type.Object({ type: Type.String(), value: Type.String() })),
    allowedOAuths: Type.Array(Type.String()),
    identityProviders: Type.Array(Type.Object({ name: Type.String(), label: Type.String() })),
    identityVerified: Type.Optional(Type.Object({ provider: Type.String(), at: Type.String() })),
    userRoleId: Type.Optional(Type.Integer()),
    userRoleName: Type.Optional(Type.String()),
    quorum: Type.Optional(Type.Integer()),
    signatureFields: Type.Array(SignatureFieldResult),
  },
  { additionalProperties: true, examples: [SHARE_EXAMPLE] },
);

/** What GET /share/document answers: the document, with the recipient's share and fields. */
export const SharedDocumentResult = Type.Object(
  {
    ...DocumentProperties,
    signatureFields: Type.Optional(Type.Array(SignatureFieldResult)),
    share: Type.Optional(ShareObject),
    consent: Type.Optional(
      Type.Object(
        {
          text: Type.String(),
          language: Type.String(),
          sha256: Type.String({ description: 'SHA-256 (hex) of the text’s UTF-8 bytes.' }),
        },
        {
          description:
            'The electronic-signature consent statement the recipient accepts before signing (POST /share/consent with its `sha256`): the tenant’s `consentStatements` in the share’s language, else the built-in one.',
        },
      ),
    ),
  },
  { additionalProperties: true },
);

/** The File record of upload answers: `id` is the file id to use in other calls (`hash` and `fileId` repeat it). */
export const FileView = Type.Object({
  id: Type.String(),
  hash: Type.String(),
  fileId: Type.String(),
  documentname: Type.String(),
  originalname: Type.String(),
  mimetype: Type.String(),
  size: Type.Integer(),
  checksum: Type.Union([Type.String(), Type.Null()]),
  pages: Type.Optional(Type.Integer()),
  createDate: Type.String(),
  repaired: Type.Optional(
    Type.Object(
      {
        problem: Type.String(),
        originalSize: Type.Integer(),
        originalChecksum: Type.String(),
      },
      {
        description:
          'Present when the PDF was repaired at upload (a damaged cross-reference table): what was wrong, and the size and SHA-512 of the bytes as uploaded, which are the first `originalSize` bytes of the stored file.',
      },
    ),
  ),
});

export const StorageUse = Type.Object(
  { used: Type.Integer(), limit: Type.Integer() },
  { description: 'The organization’s storage: bytes used and allowed.' },
);

/** What an upload answers. */
export const FileRecordSchema = Type.Object(
  {
    file: FileView,
    storage: StorageUse,
    anchorPositions: Type.Optional(
      Type.Array(
        Type.Object({
          id: Type.String(),
          fields: Type.Array(
            Type.Object({
              page: Type.Integer(),
              position: Type.Object(
                {
                  percentX: Type.Number(),
                  percentY: Type.Number(),
                  percentWidth: Type.Number(),
                  percentHeight: Type.Number(),
                },
                { description: 'May lie outside 0..1; such a position is refused where it is used.' },
              ),
            }),
          ),
        }),
        { description: 'Where each anchor (`signatureAnchors`) was found: one entry per anchor.' },
      ),
    ),
  },
  { examples: [FILE_RECORD_EXAMPLE] },
);

/**
 * The bytes of a file, as a download answers them, under each media type the answer may have: a
 * generated client then reads them as bytes, and a reader sees what they get (the type of a stored
 * file is the one its bytes show: STORED_FILE_TYPES).
 */
export function Bytes(description: string, mediaTypes: string | readonly string[] = STORED_FILE_TYPES) {
  const types = typeof mediaTypes === 'string' ? [mediaTypes] : mediaTypes;
  const bytes = { schema: { type: 'string', format: 'binary' } };
  return { description, content: Object.fromEntries(types.map((type) => [type, bytes])) };
}

/** Stamp and signature images: PNG or JPEG, as their uploads are checked to be. */
export const IMAGE_TYPES = ['image/png', 'image/jpeg'] as const;

/**
 * What every stored-file download answers besides its 200 (http/answers.ts, sendStoredFile): a range
 * (of the same types as the 200), an unsatisfiable range, and, with FILES_PUBLIC_URL set, the
 * redirect to the download origin.
 */
export function storedFileAnswers(mediaTypes: string | readonly string[] = STORED_FILE_TYPES) {
  return {
    206: Bytes('The range asked for (one `Range: bytes=a-b`), with Content-Range.', mediaTypes),
    303: Type.Null({
      description:
        'Only when the installation sets FILES_PUBLIC_URL: the bytes are served from that separate origin. `Location` is a ticket there that opens this one file for 5 minutes and nothing else (no credential of yours travels with it; browsers, fetch and `curl -L` follow it).',
      headers: {
        location: Type.String({ format: 'uri', description: 'FILES_PUBLIC_URL/f/<ticket>/<file name>' }),
      },
    }),
    416: Type.Ref('ErrorBody'),
  };
}
