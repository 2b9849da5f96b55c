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
import {
  CONTACT_ID_EXAMPLE,
  ContactPaging,
  NEW_CONTACT_EXAMPLE,
  NewContact,
  SearchContactsBody,
  UpdateContactBody,
} from '../../contacts/contract.js';
import { deleteByKey, pagedList, readByKey } from '../route-shapes.js';

const CONTACT_EXAMPLE = {
  id: CONTACT_ID_EXAMPLE,
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

const Page = Type.Object(
  {
    total: Type.Integer({ description: 'All matching contacts' }),
    from: Type.Integer(),
    size: Type.Integer(),
    results: Type.Array(ContactSchema),
  },
  { examples: [{ total: 1, from: 0, size: 20, results: [CONTACT_EXAMPLE] }] },
);
/** The caller's address book. */
export function contactRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/contacts',
      {
        schema: {
          tags: ['contacts'],
          operationId: 'createContacts',
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
          operationId: 'updateContact',
          summary: 'Change a contact',
          description:
            '`{id, _version?, …fields to change}`: only the fields sent change; `null` clears `email`, `phone`, `organisation` or `photo`. With `_version` the change applies only to that version (409 VERSION_MISMATCH otherwise: read the contact again). A new `photo` follows the rules of POST /contacts; sending the current one again is no change. Another user’s contact is 404. Answers the contact with its new `_version`.',
          body: UpdateContactBody,
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
      operationId: 'listContacts',
      summary: 'List the caller’s contacts',
      description:
        'The caller’s own contacts, ordered by name (case-insensitive), `size` at a time from `from`. Answers `{total, from, size, results:[contact]}`.',
      paging: ContactPaging,
      answer: Page,
      list: searchContacts,
    });

    postBody(app, deps, {
      path: '/contacts/search',
      tag: 'contacts',
      operationId: 'searchContacts',
      summary: 'Search the caller’s contacts',
      description:
        '`{query?, from?, size?}`: `query` matches part of the name, e-mail or organisation, case-insensitive (`%` and `_` are plain characters). Without `query`, like GET /contacts. Answers `{total, from, size, results:[contact]}`.',
      body: SearchContactsBody,
      answers: { 200: Page },
      call: searchContacts,
    });

    readByKey(app, deps, {
      path: '/contacts/:id',
      tag: 'contacts',
      operationId: 'getContact',
      summary: 'Read a contact',
      description: 'One of the caller’s contacts; anyone else’s is 404.',
      answer: ContactSchema,
      read: getContact,
    });

    deleteByKey(app, deps, {
      path: '/contacts/:id',
      tag: 'contacts',
      operationId: 'deleteContact',
      summary: 'Delete a contact',
      description:
        'Removes one of the caller’s contacts (anyone else’s is 404). Its photo id stays used and cannot be given to another record.',
      remove: deleteContact,
    });
  };
}
