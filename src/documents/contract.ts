import { Type } from 'typebox';
import {
  Attachment,
  CustomField,
  DocumentId,
  FileId,
  MainFile,
  Version,
} from '../core/documents/document-contract.js';
import { EXAMPLE_IDS, POSITION_EXAMPLE } from '../core/examples.js';
import {
  ImageEntrySchema,
  Level,
  SignatureEntrySchema,
  TextEntrySchema,
} from '../core/documents/visual-contract.js';
import { Id } from '../core/common-contract.js';
import { UsableBy } from '../core/documents/definition-access.js';
import { DefinitionField } from '../core/documents/definition-fields.js';

/**
 * What the document calls take: the schemas the routes check requests against (with their OpenAPI
 * descriptions and examples), from which the use cases' input types are made (`Static<>`).
 */

const Title = Type.String({ minLength: 1, maxLength: 500 });
const DocumentType = Type.String({
  minLength: 1,
  maxLength: 200,
  description:
    'A document definition (GET /definitions/documents/{name}); default d_default. Unknown: 400. One whose `usableBy` leaves the caller out: 403 FORBIDDEN.',
});
const Workflow = Type.Optional(
  Type.String({ minLength: 1, maxLength: 200, description: 'Default wf_archive.' }),
);
const DefinitionType = Type.Optional(
  Type.String({ minLength: 1, maxLength: 50, description: '`ext` for external file-based documents.' }),
);

const OptionalFields = {
  folder: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 100,
      description:
        'Folder to place it in: one the caller sees (400 `"optionalData.folder" must name a folder you can see` otherwise); the caller also needs rights on the document type.',
    }),
  ),
  cloneMainFile: Type.Optional(
    Type.Boolean({
      description: 'Use a copy of the main file, so that a file already used elsewhere can serve.',
    }),
  ),
  cloneFiles: Type.Optional(Type.Boolean({ description: 'Use copies of the attachments, likewise.' })),
};
const OptionalData = Type.Optional(Type.Object(OptionalFields, { additionalProperties: false }));

/** The calls that sign or annotate as they create or change a document. */
const VisualFields = {
  signatures: Type.Optional(Type.Array(SignatureEntrySchema, { maxItems: 200 })),
  images: Type.Optional(Type.Array(ImageEntrySchema, { maxItems: 200 })),
  annotations: Type.Optional(Type.Array(TextEntrySchema, { maxItems: 200 })),
  level: Level,
};

const CommonBody = {
  documentType: Type.Optional(DocumentType),
  customTemplate: Type.Optional(
    Type.String({ maxLength: 100, description: 'Template id; a reference only.' }),
  ),
  customFields: Type.Optional(
    Type.Array(CustomField, {
      maxItems: 500,
      description:
        'One entry per key (a key twice is 400). The fields the document type’s definition marks `required` must be here with a non-empty value, and a field the definition describes has its `type` (400 VALIDATION_ERROR naming it, e.g. `"body.customFields" must contain the field "amount", which document type invoice requires`); other keys are the integration’s own.',
    }),
  ),
  // More than 20 is refused with 413 LIMIT_EXCEEDED (spec Limits), so the schema allows a few more.
  file: Type.Optional(Type.Array(Attachment, { maxItems: 100 })),
};

const CREATE_EXAMPLE = {
  body: {
    documentTitle: 'Service agreement',
    pdfFile: { content: EXAMPLE_IDS.fileId },
    customFields: [
      { key: 'contractNumber', displayName: 'Contract number', type: 'string', value: 'C-2026-0042' },
    ],
  },
  optionalData: { folder: EXAMPLE_IDS.folderId },
};

/**
 * The body of POST /documents: the document’s own fields in `body`; how it is made (and what it draws or
 * signs) at the root.
 */
export const CreateDocumentBody = Type.Object(
  {
    body: Type.Object(
      { documentTitle: Title, pdfFile: Type.Optional(MainFile), ...CommonBody },
      { additionalProperties: false },
    ),
    definitionType: DefinitionType,
    workflow: Workflow,
    optionalData: Type.Optional(
      Type.Object({ ...OptionalFields, ...VisualFields }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false, examples: [CREATE_EXAMPLE] },
);

/** The body of POST /documents/bulk/create: the common fields and one file per document. */
export const BulkCreateBody = Type.Object(
  {
    body: Type.Object(CommonBody, { additionalProperties: false }),
    bulkFiles: Type.Array(
      Type.Object({ content: FileId, documentTitle: Type.Optional(Title) }, { additionalProperties: false }),
      { minItems: 1, maxItems: 1000 },
    ),
    definitionType: DefinitionType,
    workflow: Workflow,
    optionalData: OptionalData,
  },
  {
    additionalProperties: false,
    examples: [
      {
        body: { documentType: 'd_default' },
        bulkFiles: [
          { content: EXAMPLE_IDS.fileId, documentTitle: 'Service agreement' },
          { content: EXAMPLE_IDS.signedFileId, documentTitle: 'Annex A' },
        ],
      },
    ],
  },
);

/** The body of PUT /documents/owner. */
export const TransferOwnerBody = Type.Object(
  {
    id: DocumentId,
    owner: Type.String({ minLength: 1, maxLength: 320 }),
    version: Type.Optional(Version),
  },
  {
    additionalProperties: false,
    examples: [{ id: EXAMPLE_IDS.documentId, owner: 'ivy', version: 1 }],
  },
);

/** The body of PUT /documents/edit/{version}: metadata to change, or a folder to move to. */
export const EditDocumentBody = Type.Object(
  {
    id: DocumentId,
    documentTitle: Type.Optional(Title),
    customFields: Type.Optional(Type.Array(CustomField, { maxItems: 500 })),
    folder: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()])),
    isShared: Type.Optional(Type.Boolean()),
    file: CommonBody.file,
    pdfFile: Type.Optional(MainFile),
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: EXAMPLE_IDS.documentId,
        documentTitle: 'Service agreement (v2)',
        folder: EXAMPLE_IDS.folderId,
      },
    ],
  },
);

/** The body of PUT /documents/{version}: the changed fields in `body`, and what the call draws or signs. */
export const UpdateDocumentBody = Type.Object(
  {
    id: DocumentId,
    body: Type.Object(
      { documentTitle: Type.Optional(Title), pdfFile: Type.Optional(MainFile), ...CommonBody },
      { additionalProperties: false },
    ),
    ...VisualFields,
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: EXAMPLE_IDS.documentId,
        body: { documentTitle: 'Service agreement (signed copy)' },
        signatures: [
          { type: 'signature', blob: EXAMPLE_IDS.imageId, pages: [1], position: POSITION_EXAMPLE },
        ],
      },
    ],
  },
);

/** The body of PUT /documents/{id}/merge: the PDFs to append. */
export const MergeBody = Type.Object(
  { version: Version, files: Type.Array(FileId, { minItems: 1, maxItems: 50 }) },
  { additionalProperties: false, examples: [{ version: 1, files: [EXAMPLE_IDS.signedFileId] }] },
);

/** The body of DELETE /documents. */
export const DeleteDocumentsBody = Type.Object(
  {
    documents: Type.Array(Type.Object({ id: DocumentId }, { additionalProperties: false }), {
      minItems: 1,
      maxItems: 1000,
    }),
  },
  {
    additionalProperties: false,
    examples: [{ documents: [{ id: EXAMPLE_IDS.documentId }, { id: EXAMPLE_IDS.folderId }] }],
  },
);

/** The body of POST /folders. */
export const NewFolderBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 500 }),
    isShared: Type.Optional(Type.Boolean({ default: false })),
    parentFolderId: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()])),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'Contracts', isShared: true, parentFolderId: null }],
  },
);

export const DRAFT_DATA_EXAMPLE = {
  documentTitle: 'Service agreement',
  pdfFile: { content: EXAMPLE_IDS.fileId },
};

/** The body of POST /drafts and PUT /drafts/{id}/{version}. */
export const DraftBody = Type.Object(
  {
    data: Type.Object(
      {
        documentTitle: Type.Optional(Type.String({ maxLength: 500 })),
        documentType: Type.Optional(
          Type.String({
            maxLength: 200,
            description:
              'A document definition the caller may use (400 unknown, 403 when its `usableBy` leaves the caller out; a type the draft already has is kept). A draft may lack the fields the type requires: they are checked when a document is made.',
          }),
        ),
        pdfFile: Type.Optional(MainFile),
        file: Type.Optional(Type.Array(Attachment, { maxItems: 20 })),
        customFields: Type.Optional(Type.Array(CustomField, { maxItems: 500 })),
        customTemplate: Type.Optional(Type.String({ maxLength: 100 })),
      },
      {
        additionalProperties: false,
        description: '`thumbnail` and `barcode` are no longer accepted in drafts.',
      },
    ),
    cloneMainFile: Type.Optional(Type.Boolean()),
    cloneFiles: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, examples: [{ data: DRAFT_DATA_EXAMPLE }] },
);

/** The path of PUT /drafts/{id}/{version}. */
export const DraftParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 100 }),
  version: Type.Integer({ minimum: 1 }),
});

const DefinitionName = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$' });
const DefinitionFields = {
  templateFile: Type.Optional(FileId),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  fields: Type.Optional(
    Type.Array(DefinitionField, {
      maxItems: 500,
      description:
        'The `customFields` of documents of this type, one entry per `key` (a key twice is 400). Keys not described here pass as they are.',
    }),
  ),
  usableBy: Type.Optional(UsableBy),
};

export const DEFINITION_EXAMPLE = {
  description: 'Supplier invoices',
  fields: [{ key: 'amount', displayName: 'Amount', type: 'number', required: true }],
  usableBy: { groups: ['050839dd-4fbf-428a-abae-88cf336f3e42'] },
};

/** The body of POST /definitions/documents/name. */
export const NewDefinitionBody = Type.Object(
  { name: DefinitionName, ...DefinitionFields },
  { additionalProperties: false, examples: [{ name: 'invoice', ...DEFINITION_EXAMPLE }] },
);

/** The body of PUT /definitions/documents/{name}: the fields to change. */
export const DefinitionChangesBody = Type.Object(DefinitionFields, {
  additionalProperties: false,
  examples: [DEFINITION_EXAMPLE],
});

/** The path of PUT and GET /definitions/documents/{name}. */
export const DefinitionParams = Type.Object({ name: DefinitionName });

/** A file of a document or draft: the document's or draft's id and the file's hash. */
export const FileParams = Type.Object({ id: Id, hash: Id });
