import { Type } from 'typebox';
import { Name, Password } from '../core/common-contract.js';
import { RIGHTS, ROLES } from '../core/access/roles.js';
import { EXAMPLE_IDS } from '../core/examples.js';

/**
 * What the user calls take: the schemas the routes check requests against (with their OpenAPI
 * descriptions and examples), from which the use cases' input types are made (`Static<>`).
 */

const Role = Type.Enum([...ROLES]);
const Rights = Type.Array(Type.Enum([...RIGHTS]), { uniqueItems: true, maxItems: RIGHTS.length });
const Email = Type.String({ format: 'email', maxLength: 320 });
const Photo = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'File id of an unused upload of the caller from POST /files/photo; a photo id is used once',
});

const ImageList = Type.Array(
  Type.Object(
    {
      imageId: Type.String({ minLength: 1, maxLength: 100, description: 'File id of the image' }),
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    },
    { additionalProperties: false },
  ),
  { maxItems: 20 },
);

/** Body of POST /configuration/images and PUT /users/:id/upload. */
export const SignatureImagesBody = Type.Object(
  { signature: Type.Optional(ImageList), initials: Type.Optional(ImageList) },
  {
    additionalProperties: false,
    minProperties: 1,
    examples: [{ signature: [{ imageId: EXAMPLE_IDS.imageId, name: 'My signature' }] }],
  },
);

export const NEW_USER_EXAMPLE = {
  name: 'ivy',
  password: 'a-long-password',
  displayName: 'Ivy Signer',
  email: 'ivy@example.com',
  role: 'user',
  rights: ['use_file_management', 'use_document_management'],
};

/** One user of POST /users. */
export const NewUser = Type.Object(
  {
    name: Name,
    password: Type.Optional(Password),
    displayName: Type.Optional(Type.String({ maxLength: 200 })),
    email: Type.Optional(Email),
    role: Type.Optional(Role),
    organization: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    rights: Type.Optional(Rights),
    photo: Type.Optional(Photo),
  },
  {
    additionalProperties: false,
    examples: [NEW_USER_EXAMPLE],
  },
);

/** The body of PUT /users/{id}: what to change (at least one field). */
export const UpdateUserBody = Type.Object(
  {
    status: Type.Optional(Type.Enum(['active', 'suspended'])),
    displayName: Type.Optional(Type.String({ maxLength: 200 })),
    email: Type.Optional(Type.Union([Email, Type.Null()])),
    password: Type.Optional(Password),
    role: Type.Optional(Role),
    rights: Type.Optional(Rights),
    organization: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    photo: Type.Optional(Type.Union([Photo, Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ status: 'suspended' }] },
);

/** The body of PUT /users/activate: the token given at creation and the password chosen. */
export const ActivateBody = Type.Object(
  {
    activationToken: Type.String({ minLength: 1, maxLength: 200 }),
    password: Password,
    returnToken: Type.Optional(Type.Boolean({ default: true })),
  },
  {
    additionalProperties: false,
    examples: [
      {
        activationToken: '89WdVxXtZ70iNXNK5y2G9oKCSulkNrFbrFPcRzoVeVA',
        password: 'a-long-password',
      },
    ],
  },
);

/** The body of POST /groups/search (optional). */
export const GroupSearchBody = Type.Optional(
  Type.Object(
    {
      query: Type.Optional(Type.String({ maxLength: 200 })),
      includeUserCount: Type.Optional(Type.Boolean()),
      from: Type.Optional(Type.Integer({ minimum: 0 })),
      size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    },
    { additionalProperties: false, examples: [{ query: 'sales', includeUserCount: true }] },
  ),
);
