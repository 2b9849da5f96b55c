import { Type } from 'typebox';
import { FileId, SignatureField, SignEntity } from '../core/documents/document-contract.js';
import { EXAMPLE_IDS, POSITION_EXAMPLE } from '../core/examples.js';

/**
 * What the template calls take: the schemas the routes check requests against (with their OpenAPI
 * descriptions and examples), from which the use cases' input types are made (`Static<>`).
 */

export const TEMPLATE_DATA_EXAMPLE = {
  name: 'Non-disclosure agreement',
  documentType: 'd_default',
  file: EXAMPLE_IDS.fileId,
  sequential: true,
  category: 'Legal',
  type: 'sign',
  signEntities: [
    { type: 'user', quorum: 1, userRoleId: 1, userRoleName: 'Counterparty', shareType: 'sign', order: 0 },
  ],
  signFields: [{ type: 'signature', pages: [2], position: POSITION_EXAMPLE, required: true, userRoleId: 1 }],
};

/** The data of a template, as POST and PUT /templates take it. */
export const TemplateData = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 500 }),
    documentType: Type.Optional(
      Type.String({
        maxLength: 200,
        description:
          'A document definition the caller may use (400 unknown, 403 when its `usableBy` leaves the caller out; on edit, a type the template already has is kept).',
      }),
    ),
    definitionType: Type.Optional(Type.String({ maxLength: 50 })),
    file: Type.Optional(FileId),
    sequential: Type.Optional(
      Type.Boolean({ description: 'Signatures collected in sequence (true) or in parallel.' }),
    ),
    category: Type.Optional(Type.String({ maxLength: 200 })),
    signEntities: Type.Optional(Type.Array(SignEntity, { maxItems: 100 })),
    signFields: Type.Optional(Type.Array(SignatureField, { maxItems: 1000 })),
    type: Type.Optional(Type.Enum(['sign'])),
    __users: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        maxItems: 1000,
        description:
          'Users the template is shown to, by id or login name (stored as ids). Default on creation: the creator; kept on edit when absent.',
      }),
    ),
    __groups: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        maxItems: 100,
        description:
          'Groups (organization ids, see POST /groups/search) whose members the template is shown to. Default on creation: none; kept on edit when absent.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'A template: a file and the signature fields to place on it (`thumbnail` is no longer accepted).',
  },
);

/** One edit of PUT /templates. */
export const TemplateEdit = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 100 }),
    version: Type.Optional(Type.Integer({ minimum: 1 })),
    data: TemplateData,
    cloneFile: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** The body of POST /templates: the data, and whether the template gets its own copy of the file. */
export const CreateTemplateBody = Type.Object(
  { data: TemplateData, cloneFile: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, examples: [{ data: TEMPLATE_DATA_EXAMPLE, cloneFile: true }] },
);

/** The body of PUT /templates: one edit or several, all or none. */
export const EditTemplatesBody = Type.Union(
  [TemplateEdit, Type.Array(TemplateEdit, { minItems: 1, maxItems: 1000 })],
  {
    examples: [{ id: EXAMPLE_IDS.templateId, version: 1, data: TEMPLATE_DATA_EXAMPLE }],
  },
);

/** The path of GET /templates/:templateId. */
export const TemplateParams = Type.Object({ templateId: Type.String({ minLength: 1, maxLength: 100 }) });
