import { Type } from 'typebox';
import { ENUM_RECORDS_LIMIT } from './put-enum-record.js';

/**
 * What the enum calls take: the schemas the routes check requests against (with their OpenAPI
 * descriptions and examples), from which the use cases' input types are made (`Static<>`).
 */

export const EnumName = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$',
  description: 'Letters, digits, `_`, `.` and `-`, up to 100; unique in the organization',
});
const Label = Type.String({ minLength: 1, maxLength: 500 });
const RecordValue = Type.String({ minLength: 1, maxLength: 200 });
const Photo = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'File id of an unused upload from POST /files/photo; a photo id is used once',
});
const Files = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  maxItems: 20,
  uniqueItems: true,
  description: 'File ids of unused uploads from POST /files/saveFile; each is used once',
});

const RecordFields = {
  value: RecordValue,
  label: Label,
  photo: Type.Optional(Photo),
  files: Type.Optional(Files),
};
/** One record of an enum as a request gives it. */
export const NewRecord = Type.Object(RecordFields, { additionalProperties: false });

/** The body of POST /enums: its name, label and records. */
export const CreateEnumBody = Type.Object(
  {
    name: EnumName,
    label: Type.Optional(Label),
    records: Type.Optional(Type.Array(NewRecord, { maxItems: ENUM_RECORDS_LIMIT })),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'countries', label: 'Countries', records: [{ value: 'DE', label: 'Germany' }] }],
  },
);

/** The body of PUT /enums/:name/record: the record, optionally the enum's version. */
export const PutEnumRecordBody = Type.Object(
  { ...RecordFields, _version: Type.Optional(Type.Integer({ minimum: 1 })) },
  { additionalProperties: false, examples: [{ value: 'FR', label: 'France', _version: 1 }] },
);

/** The path of the calls on one enum: its name. */
export const EnumNameParams = Type.Object({ name: EnumName });
