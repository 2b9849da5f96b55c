import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { createEnum } from '../../enums/create-enum.js';
import { deleteEnum } from '../../enums/delete-enum.js';
import { getEnum } from '../../enums/get-enum.js';
import { listEnums } from '../../enums/list-enums.js';
import { ENUM_RECORDS_LIMIT, putEnumRecord } from '../../enums/put-enum-record.js';
import { actorOf } from '../authentication.js';
import { deleteByKey, pagedList, postBody, readByKey } from '../route-shapes.js';
import { withErrors } from '../schemas.js';
import { Paging } from '../../core/common-contract.js';
import { CreateEnumBody, EnumNameParams, PutEnumRecordBody } from '../../enums/contract.js';

const RecordSchema = Type.Object({
  value: Type.String(),
  label: Type.String(),
  photo: Type.Union([Type.String(), Type.Null()]),
  files: Type.Array(Type.String()),
});
const RECORD_EXAMPLE = { value: 'DE', label: 'Germany', photo: null, files: [] };
const ENUM_EXAMPLE = {
  id: '7a3c9e1f-2b4d-4f68-8e0a-6c5b3d1f9e27',
  name: 'countries',
  label: 'Countries',
  organization: '050839dd-4fbf-428a-abae-88cf336f3e42',
  creator: 'admin@example.com',
  records: [RECORD_EXAMPLE, { value: 'FR', label: 'France', photo: null, files: [] }],
  createDate: '2026-03-01T08:00:00.000Z',
  modifyDate: '2026-03-01T08:00:00.000Z',
  _version: 2,
};

const EnumSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    label: Type.Union([Type.String(), Type.Null()]),
    organization: Type.String({ description: 'The organization id the enum belongs to' }),
    creator: Type.String({ description: 'Login name of the creator' }),
    records: Type.Array(RecordSchema),
    createDate: Type.String(),
    modifyDate: Type.String(),
    _version: Type.Integer({ description: 'Bumped by every change; PUT /enums/:name/record may name it' }),
  },
  { description: 'An enum: a named value list of an organization.', examples: [ENUM_EXAMPLE] },
);

const WHO =
  'An enum belongs to its creator’s organization: every member reads it (lite roles too), members with a full role (`user` or an administrator role) create enums, and its creator and the organization’s administrators change and delete it (others of the organization get 403). Another organization’s enum is 404.';

/** Named value lists of an organization. */
export function enumRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    postBody(app, deps, {
      path: '/enums',
      tag: 'enums',
      operationId: 'createEnum',
      summary: 'Create an enum',
      description: `\`{name, label?, records?: [{value, label, photo?, files?}]}\`; answers the enum. \`name\` is unique in the organization (409 CONFLICT otherwise), record \`value\`s are unique in the enum, at most ${ENUM_RECORDS_LIMIT} records. A record's \`photo\` is an unused upload of the caller from POST /files/photo, its \`files\` unused uploads from POST /files/saveFile; each id is used once, so a used id, one from another endpoint or one given twice is 400 FILE_NOT_USABLE naming the field (\`records[0].photo\`, \`records[1].files[0]\`). ${WHO}`,
      body: CreateEnumBody,
      answers: { 200: EnumSchema, 409: Type.Ref('ErrorBody') },
      call: createEnum,
    });

    app.put(
      '/enums/:name/record',
      {
        schema: {
          tags: ['enums'],
          operationId: 'putEnumRecord',
          summary: 'Add or replace one record of an enum',
          description: `\`{value, label, photo?, files?, _version?}\`: adds a record, or replaces the one with the same \`value\` in place (all of it: a field left out is gone). Files follow the rules of POST /enums (errors name \`photo\` or \`files[0]\`); the replaced record's own photo and files may be sent again. With \`_version\` the change applies only to that version of the enum (409 VERSION_MISMATCH otherwise). 413 LIMIT_EXCEEDED beyond ${ENUM_RECORDS_LIMIT} records. Answers the enum. ${WHO}`,
          params: EnumNameParams,
          body: PutEnumRecordBody,
          response: withErrors({ 200: EnumSchema, 409: Type.Ref('ErrorBody'), 413: Type.Ref('ErrorBody') }),
        },
      },
      async (request) => {
        const { _version, ...record } = request.body;
        return putEnumRecord(deps, actorOf(request), request.params.name, record, _version);
      },
    );

    pagedList(app, deps, {
      path: '/enums',
      tag: 'enums',
      operationId: 'listEnums',
      summary: 'List the organization’s enums',
      description:
        'The enums of the caller’s organization with their records, ordered by name, `size` (at most 100, default 20) at a time from `from`. Answers `{total, from, size, results:[enum]}`.',
      paging: Paging,
      answer: Type.Object(
        {
          total: Type.Integer(),
          from: Type.Integer(),
          size: Type.Integer(),
          results: Type.Array(EnumSchema),
        },
        { examples: [{ total: 1, from: 0, size: 20, results: [ENUM_EXAMPLE] }] },
      ),
      list: listEnums,
    });

    readByKey(app, deps, {
      path: '/enums/:name',
      tag: 'enums',
      operationId: 'getEnum',
      summary: 'Read an enum',
      description: WHO,
      params: EnumNameParams,
      key: 'name',
      answer: EnumSchema,
      read: getEnum,
    });

    deleteByKey(app, deps, {
      path: '/enums/:name',
      tag: 'enums',
      operationId: 'deleteEnum',
      summary: 'Delete an enum',
      description: `The name is free again; the enum’s file ids stay used. ${WHO}`,
      params: EnumNameParams,
      key: 'name',
      remove: deleteEnum,
    });
  };
}
