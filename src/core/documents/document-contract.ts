import { Type } from 'typebox';

/**
 * The words of the document resources that requests use (ids, a place on a page, fields, sign
 * entities): several capabilities' contracts and the routes share them.
 */
export const FileId = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'A <file_hash>: `file.id` of an upload.',
});
export const DocumentId = Type.String({ minLength: 1, maxLength: 100 });
export const Version = Type.Integer({
  minimum: 1,
  description: 'The document’s current `_version` (409 when stale).',
});

export const Position = Type.Object(
  {
    percentX: Type.Number({ minimum: 0, maximum: 1 }),
    percentY: Type.Number({ minimum: 0, maximum: 1 }),
    percentWidth: Type.Number({ minimum: 0, maximum: 1 }),
    percentHeight: Type.Number({ minimum: 0, maximum: 1 }),
  },
  {
    additionalProperties: false,
    description: 'Fractions of the page (0 to 1), from its top-left corner.',
  },
);

export const CustomField = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 200 }),
    displayName: Type.Optional(Type.String({ maxLength: 500 })),
    type: Type.Enum(['string', 'number', 'date']),
    value: Type.Union([Type.String({ maxLength: 10_000 }), Type.Number()]),
  },
  {
    additionalProperties: false,
    description: 'Stored and returned as a string; dates as ISO (sent as ISO or epoch milliseconds).',
  },
);

export const Attachment = Type.Object(
  {
    content: FileId,
    public: Type.Optional(Type.Boolean({ description: 'Visible in external shares (default false).' })),
  },
  { additionalProperties: false },
);

export const MainFile = Type.Object(
  { content: FileId, mimetype: Type.Optional(Type.String({ maxLength: 200 })) },
  { additionalProperties: false },
);

export const SignatureField = Type.Object(
  {
    type: Type.Enum(['signature', 'annotation', 'initials', 'stamp', 'wacom', 'image']),
    subtype: Type.Optional(
      Type.String({
        maxLength: 100,
        description:
          'For `annotation` fields: `annotation_generic` (text), `annotation_submitted_file` (the recipient submits a file), `annotation_date` (a date in the share’s `dateFormat`, default `yyyy-MM-dd`), `annotation_checkbox` (`"true"`/`"false"`; written as `X` when checked; a `required` box must be checked), `annotation_select` (one of its options, by `value`; its `label` is written), `annotation_number` (a number such as `1250` or `-12.5`). The recipient answers in the sign call with an `annotations` entry naming the field by `fieldId`.',
      }),
    ),
    pages: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 10_000 })),
    multipage: Type.Optional(Type.Boolean()),
    position: Position,
    backgroundColor: Type.Optional(Type.String({ maxLength: 20 })),
    config: Type.Optional(
      Type.String({
        maxLength: 10_000,
        description:
          'A JSON object in a string. Kept as given: `multipageType`, `multiPageCustom`, `placeholder`, `group`. Read by Signery: `importedField` (an `annotation` showing a custom field of the document); for `annotation_select`, `options` (`["A","B"]` or `[{"value":"a","label":"A"}]`) or `enum` (the name of an enum of the sharer’s organization; its records become the options); for `annotation_number`, `min`, `max` and `decimals` (digits allowed after the point).',
      }),
    ),
    required: Type.Optional(Type.Boolean()),
    order: Type.Optional(Type.Integer({ minimum: 0 })),
    tooltip: Type.Optional(Type.String({ maxLength: 1000 })),
    user: Type.Optional(Type.Array(Type.String({ maxLength: 320 }), { maxItems: 100 })),
    userRoleId: Type.Optional(Type.Integer()),
    userRoleName: Type.Optional(Type.String({ maxLength: 200 })),
    timestamp: Type.Optional(Type.Boolean()),
    text: Type.Optional(Type.String({ maxLength: 10_000 })),
    readOnly: Type.Optional(Type.Boolean()),
    align: Type.Optional(Type.Enum(['left', 'center', 'right'])),
    bold: Type.Optional(Type.Boolean()),
    font: Type.Optional(Type.String({ maxLength: 100 })),
    fontSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
    color: Type.Optional(Type.String({ maxLength: 20 })),
    numberOfLines: Type.Optional(Type.Integer({ minimum: -1 })),
    customId: Type.Optional(Type.String({ maxLength: 200 })),
  },
  {
    additionalProperties: false,
    description:
      'A field a recipient fills: `signature`, `initials`, `stamp`, `image`, `wacom`, or `annotation` (a text field; subtype `annotation_submitted_file`: the recipient submits a file). `user` names the recipients (of the same share call) who fill it; `config` is a JSON object in a string.',
  },
);

export const SignEntity = Type.Object(
  {
    type: Type.String({ maxLength: 50 }),
    quorum: Type.Optional(Type.Integer({ minimum: 1 })),
    userRoleId: Type.Optional(Type.Integer()),
    userRoleName: Type.Optional(Type.String({ maxLength: 200 })),
    shareType: Type.Optional(Type.String({ maxLength: 50 })),
    order: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  {
    additionalProperties: false,
    description:
      'A group of sign recipients by role: a recipient with its `userRoleId` (or `userRoleName`) is a member; the entity is satisfied once `quorum` members signed.',
  },
);
