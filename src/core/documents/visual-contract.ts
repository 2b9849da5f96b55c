import { Type } from 'typebox';
import { FileId, Position } from './document-contract.js';

/**
 * What a request draws on a document (spec: Signature entry, Image entry; Contract: text entry) and the
 * PAdES level it asks for: the sign, annotate, share and create calls of several capabilities take them.
 */

const Pages = Type.Optional(
  Type.Array(Type.Integer({ minimum: 1 }), {
    minItems: 1,
    maxItems: 10_000,
    description: '1-based; default [1].',
  }),
);

/**
 * The share's field an entry fills (a signature, initials, stamp or image field), named as the signer
 * page names it; the field's own pages and position are sent beside it.
 */
const FilledField = Type.Optional(
  Type.String({
    maxLength: 200,
    description: 'The share’s signature field this entry fills: its `fieldId` (or its `customId`).',
  }),
);

export const SignatureEntrySchema = Type.Object(
  {
    fieldId: FilledField,
    pages: Pages,
    position: Position,
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
    fieldId: FilledField,
    comment: Type.Optional(Type.String({ maxLength: 2000 })),
    position: Position,
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
          'The share’s signature field this text answers: its `fieldId` (every field of a share has one, shown in the Share objects and GET /share/document), or its `customId` when it has one. Required fields must be answered. An answer to a date, checkbox, select or number field (see POST /share) must be a value of its kind, 400 naming the answer and the field otherwise (`"annotations[1].text" must be a date written dd.MM.yyyy (the share\'s dateFormat), for the field "start"`); what is written is the date or number as given, `X` for a checked box (nothing for an unchecked one), the chosen option’s `label`.',
      }),
    ),
    subtype: Type.Optional(Type.String({ maxLength: 50 })),
    text: Type.String({
      minLength: 1,
      maxLength: 5000,
      description: '`{{{documentId}}}` and `{{{documentTitle}}}` are replaced.',
    }),
    pages: Pages,
    position: Position,
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
