import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { createContacts } from '../../contacts/create-contacts.js';
import { deleteContact } from '../../contacts/delete-contact.js';
import { getContact } from '../../contacts/get-contact.js';
import { searchContacts } from '../../contacts/search-contacts.js';
import { updateContact } from '../../contacts/update-contact.js';
import type { Deps } from '../../core/deps.js';
import { actorOf } from '../authentication.js';
import { postBody } from '../route-shapes.js';
import { createOneOrMany, CreatedOneOrMany, OneOrMany } from '../one-or-many.js';
import { withErrors } from '../schemas.js';
import { Id, Name } from '../../core/common-contract.js';
import { deleteByKey, pagedList, readByKey } from '../route-shapes.js';

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

const NEW_CONTACT_EXAMPLE = {
  name: 'Ivy Signer',
  email: 'ivy@example.com',
  phone: '+49 30 1234567',
  organisation: 'Example Ltd',
};
const CONTACT_EXAMPLE = {
  id: '0b6f2d8e-4a1c-4e7b-9f3d-5c8a2e1b7d94',
  ...NEW_CONTACT_EXAMPLE,
  photo: null,
  createDate: '2026-03-01T08:00:00.000Z',
  modifyDate: '2026-03-01T08:00:00.000Z',
  _version: 1,
};

const ContactSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    email: Type.Union([Type.String(), Type.Null()]),
    phone: Type.Union([Type.String(), Type.Null()]),
    organisation: Type.Union([Type.String(), Type.Null()]),
    photo: Type.Union([Type.String(), Type.Null()], { description: 'File id of the photo' }),
    createDate: Type.String(),
    modifyDate: Type.String(),
    _version: Type.Integer({ description: 'Bumped by every change; PUT /contacts may name it' }),
  },
  { description: 'A contact: an entry of the caller’s own address book.', examples: [CONTACT_EXAMPLE] },
);

const NewContact = Type.Object(
  {
    name: Name,
    email: Type.Optional(Email),
    phone: Type.Optional(Phone),
    organisation: Type.Optional(Organisation),
    photo: Type.Optional(Photo),
  },
  { additionalProperties: false },
);

const Page = Type.Object(
  {
    total: Type.Integer({ description: 'All matching contacts' }),
    from: Type.Integer(),
    size: Type.Integer(),
    results: Type.Array(ContactSchema),
  },
  { examples: [{ total: 1, from: 0, size: 20, results: [CONTACT_EXAMPLE] }] },
);
const From = Type.Integer({ minimum: 0, maximum: 100_000, description: '0-based offset (default 0)' });
const Size = Type.Integer({ minimum: 1, maximum: 100, description: 'Page size, at most 100 (default 20)' });
/** Which page of the contacts: the list's query and the search's body. */
const Paging = { from: Type.Optional(From), size: Type.Optional(Size) };

/** The caller's address book. */
export function contactRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/contacts',
      {
        schema: {
          tags: ['contacts'],
          summary: 'Create contacts',
          description:
            'One contact `{name, email?, phone?, organisation?, photo?}` answers the created contact; an array of up to 100 answers `{results:[contact]}` in the same order and is created all or none (413 LIMIT_EXCEEDED beyond 100). A contact belongs to its creator: nobody else sees it. `photo` is the id of an unused upload of the caller from POST /files/photo; a photo id already used (by any user, contact or enum) or uploaded with another endpoint is 400 FILE_NOT_USABLE, its message naming the field (`photo`, or `[2].photo` in an array).',
          body: OneOrMany(NewContact, { examples: [NEW_CONTACT_EXAMPLE] }),
          response: withErrors({
            200: CreatedOneOrMany(ContactSchema, { examples: [CONTACT_EXAMPLE] }),
            413: Type.Ref('ErrorBody'),
          }),
        },
      },
      async (request) => {
        const actor = actorOf(request);
        return createOneOrMany(request.body, (contacts, options) =>
          createContacts(deps, actor, contacts, options),
        );
      },
    );

    app.put(
      '/contacts',
      {
        schema: {
          tags: ['contacts'],
          summary: 'Change a contact',
          description:
            '`{id, _version?, …fields to change}`: only the fields sent change; `null` clears `email`, `phone`, `organisation` or `photo`. With `_version` the change applies only to that version (409 VERSION_MISMATCH otherwise: read the contact again). A new `photo` follows the rules of POST /contacts; sending the current one again is no change. Another user’s contact is 404. Answers the contact with its new `_version`.',
          body: Type.Object(
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
              examples: [
                { id: CONTACT_EXAMPLE.id, _version: 1, phone: '+49 30 7654321', organisation: null },
              ],
            },
          ),
          response: withErrors({ 200: ContactSchema, 409: Type.Ref('ErrorBody') }),
        },
      },
      async (request) => {
        const { id, _version, ...changes } = request.body;
        return updateContact(deps, actorOf(request), id, changes, _version);
      },
    );

    pagedList(app, deps, {
      path: '/contacts',
      tag: 'contacts',
      summary: 'List the caller’s contacts',
      description:
        'The caller’s own contacts, ordered by name (case-insensitive), `size` at a time from `from`. Answers `{total, from, size, results:[contact]}`.',
      paging: Paging,
      answer: Page,
      list: searchContacts,
    });

    postBody(app, deps, {
      path: '/contacts/search',
      tag: 'contacts',
      summary: 'Search the caller’s contacts',
      description:
        '`{query?, from?, size?}`: `query` matches part of the name, e-mail or organisation, case-insensitive (`%` and `_` are plain characters). Without `query`, like GET /contacts. Answers `{total, from, size, results:[contact]}`.',
      body: Type.Object(
        {
          query: Type.Optional(Type.String({ maxLength: 200 })),
          ...Paging,
        },
        { additionalProperties: false, examples: [{ query: 'example ltd', size: 20 }] },
      ),
      answers: { 200: Page },
      call: searchContacts,
    });

    readByKey(app, deps, {
      path: '/contacts/:id',
      tag: 'contacts',
      summary: 'Read a contact',
      description: 'One of the caller’s contacts; anyone else’s is 404.',
      answer: ContactSchema,
      read: getContact,
    });

    deleteByKey(app, deps, {
      path: '/contacts/:id',
      tag: 'contacts',
      summary: 'Delete a contact',
      description:
        'Removes one of the caller’s contacts (anyone else’s is 404). Its photo id stays used and cannot be given to another record.',
      remove: deleteContact,
    });
  };
}
