import { Type } from 'typebox';
import { FileId, Position } from './document-contract.js';

/**
 * What a request draws on a document (spec: Signature entry, Image entry; Contract: text entry) and the
 * PAdES level it asks for: the sign, annotate, share and create calls of several capabilities take them.
 */

/**
 * The box of an entry: required unless the entry names a share field by `fieldId`, which gives it its
 * box (checked after the schema: `assertPositioned`, core/signing/visual-input.ts).
 */
const EntryPosition = Type.Optional(Position);

/** An entry's `fieldId`: the recipient's share field it fills (core/sharing/field-confinement.ts). */
function fieldIdOf(what: string) {
  return Type.Optional(
    Type.String({
      maxLength: 200,
      description: `The share’s signature field ${what}: its \`fieldId\` (every field of a share has one, shown in the Share objects and GET /share/document), or its \`customId\` when it has one. The entry then takes its \`pages\` and \`position\` from the field (given anyway, the field’s win). A recipient fills only fields assigned to them: an unknown field, another recipient’s, a read-only or imported one, or one of another kind is 400 naming the entry (\`"annotations[0].fieldId"\`).`,
    }),
  );
}

const Pages = Type.Optional(
  Type.Array(Type.Integer({ minimum: 1 }), {
    minItems: 1,
    maxItems: 10_000,
    description: '1-based; default [1].',
  }),
);

export const SignatureEntrySchema = Type.Object(
  {
    fieldId: fieldIdOf(
      'this signature fills (a `signature` or `wacom` field for `signature`, `initials` for `initials`, `stamp` or `image` for `stamp` and `image`)',
    ),
    pages: Pages,
    position: EntryPosition,
    blob: Type.Optional(FileId),
    decorationType: Type.Optional(
      Type.Enum(['empty', 'line', 'frame'], {
        description:
          '`empty` (default): the image alone; `line`: a line under it; `frame`: a border round the box.',
      }),
    ),
    type: Type.Enum(['signature', 'initials', 'stamp', 'annotation', 'image', 'wacom']),
    timestamp: Type.Optional(Type.Boolean()),
    comment: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  {
    additionalProperties: false,
    description:
      'A signature to place: its box (`pages`, `position`), its image (`blob`: an upload from POST /files/signature or /files/initials, or a stamp id; without one the signer’s name is drawn) and decoration.',
  },
);

export const ImageEntrySchema = Type.Object(
  {
    fieldId: fieldIdOf('this image fills (a `stamp` or `image` field)'),
    comment: Type.Optional(Type.String({ maxLength: 2000 })),
    position: EntryPosition,
    pages: Pages,
    blob: FileId,
    subtype: Type.Optional(
      Type.String({ maxLength: 50, description: '`image_barcode` for the document barcode.' }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'An image to place: an unused upload from POST /files/saveFile, or the document’s `barcode`.',
  },
);

export const TextEntrySchema = Type.Object(
  {
    fieldId: Type.Optional(
      Type.String({
        maxLength: 200,
        description:
          'The share’s signature field this text answers: its `fieldId` (every field of a share has one, shown in the Share objects and GET /share/document), or its `customId` when it has one; the text takes its `pages` and `position` from the field (given anyway, the field’s win). Required fields must be answered. A recipient answers only `annotation` fields assigned to them that they fill in (not read-only, not imported, not `annotation_submitted_file`): any other is 400 naming the entry (`"annotations[0].fieldId"`). An answer to a date, checkbox, select or number field (see POST /share) must be a value of its kind, 400 naming the answer and the field otherwise (`"annotations[1].text" must be a date written dd.MM.yyyy (the share\'s dateFormat), for the field "start"`); what is written is the date or number as given, `X` for a checked box (nothing for an unchecked one), the chosen option’s `label`.',
      }),
    ),
    subtype: Type.Optional(Type.String({ maxLength: 50 })),
    text: Type.String({
      minLength: 1,
      maxLength: 5000,
      description: '`{{{documentId}}}` and `{{{documentTitle}}}` are replaced.',
    }),
    pages: Pages,
    position: EntryPosition,
    align: Type.Optional(Type.Enum(['left', 'center', 'right'])),
    fontSize: Type.Optional(Type.Integer({ minimum: 4, maximum: 144 })),
    bold: Type.Optional(Type.Boolean()),
    color: Type.Optional(Type.String({ pattern: '^#[0-9A-Fa-f]{6}$' })),
    backgroundColor: Type.Optional(Type.String({ pattern: '^#[0-9A-Fa-f]{6}([0-9A-Fa-f]{2})?$' })),
  },
  { additionalProperties: false },
);

export const Level = Type.Optional(
  Type.Enum(['B-B', 'B-T', 'B-LT', 'B-LTA'], {
    description:
      'PAdES level; default the tenant property `defaultPadesLevel`, else B-T with TSA_URL, else B-B.',
  }),
);
