import { Type } from 'typebox';
import { Id, Name } from '../core/common-contract.js';

/**
 * What the contact calls take: the schemas the routes check requests against (with their OpenAPI
 * descriptions and examples), from which the use cases' input types are made (`Static<>`).
 */

const Email = Type.String({ format: 'email', maxLength: 320 });
const Phone = Type.String({
  pattern: '^\\+?[0-9][-0-9 ()./]{1,48}$',
  description: 'Digits with an optional leading `+`; spaces, `-`, `.`, `/` and brackets allowed',
});
const Organisation = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'The contact’s company or institution (free text)',
});
const Photo = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'File id of an unused upload from POST /files/photo; a photo id is used once',
});

/** The id of the contact the examples name. */
export const CONTACT_ID_EXAMPLE = '0b6f2d8e-4a1c-4e7b-9f3d-5c8a2e1b7d94';

export const NEW_CONTACT_EXAMPLE = {
  name: 'Ivy Signer',
  email: 'ivy@example.com',
  phone: '+49 30 1234567',
  organisation: 'Example Ltd',
};

/** One contact of POST /contacts. */
export const NewContact = Type.Object(
  {
    name: Name,
    email: Type.Optional(Email),
    phone: Type.Optional(Phone),
    organisation: Type.Optional(Organisation),
    photo: Type.Optional(Photo),
  },
  { additionalProperties: false },
);

/** The body of PUT /contacts: the contact, optionally its version, and the fields to change. */
export const UpdateContactBody = Type.Object(
  {
    id: Id,
    _version: Type.Optional(Type.Integer({ minimum: 1 })),
    name: Type.Optional(Name),
    email: Type.Optional(Type.Union([Email, Type.Null()])),
    phone: Type.Optional(Type.Union([Phone, Type.Null()])),
    organisation: Type.Optional(Type.Union([Organisation, Type.Null()])),
    photo: Type.Optional(Type.Union([Photo, Type.Null()])),
  },
  {
    additionalProperties: false,
    examples: [{ id: CONTACT_ID_EXAMPLE, _version: 1, phone: '+49 30 7654321', organisation: null }],
  },
);

const From = Type.Integer({ minimum: 0, maximum: 100_000, description: '0-based offset (default 0)' });
const Size = Type.Integer({ minimum: 1, maximum: 100, description: 'Page size, at most 100 (default 20)' });
/** Which page of the contacts: the list's query and the search's body. */
export const ContactPaging = { from: Type.Optional(From), size: Type.Optional(Size) };

/** The body of POST /contacts/search. */
export const SearchContactsBody = Type.Object(
  {
    query: Type.Optional(Type.String({ maxLength: 200 })),
    ...ContactPaging,
  },
  { additionalProperties: false, examples: [{ query: 'example ltd', size: 20 }] },
);
