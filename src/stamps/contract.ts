import { Type } from 'typebox';
import { Id, Name, Paging } from '../core/common-contract.js';
import { STAMP_SCOPES } from '../core/stamps/stamp-access.js';

/**
 * What the stamp calls take: the schemas the routes check requests against (with their OpenAPI
 * descriptions and examples), from which the use cases' input types are made (`Static<>`).
 */

const FileId = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'An unused file id from POST /files/saveFile',
});

/** The body of POST /stamps: its name, image and scope. */
export const CreateStampBody = Type.Object(
  {
    name: Name,
    file: FileId,
    scope: Type.Optional(Type.Enum([...STAMP_SCOPES])),
    organization: Type.Optional(Id),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'Company stamp', file: '5e8d2c4b7a1f3e6d9c0b2a4f6e8d1c3b', scope: 'organization' }],
  },
);

/** The body of POST /stamps/search. */
export const SearchStampsBody = Type.Object(
  {
    query: Type.Optional(Type.String({ maxLength: 200 })),
    scope: Type.Optional(Type.Enum([...STAMP_SCOPES])),
    ...Paging,
  },
  {
    additionalProperties: false,
    examples: [{ query: 'company', scope: 'organization', size: 20 }],
  },
);

/** The body of PUT /stamps/:id: a new name or image, optionally the version it is based on. */
export const UpdateStampBody = Type.Object(
  {
    name: Type.Optional(Name),
    file: Type.Optional(FileId),
    version: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false, examples: [{ name: 'Company stamp (2026)', version: 1 }] },
);
