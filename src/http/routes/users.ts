import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { activateUser } from '../../users/activate-user.js';
import { assignSignatureImages } from '../../users/assign-signature-images.js';
import { createUsers } from '../../users/create-user.js';
import { deleteUser } from '../../users/delete-user.js';
import { getUser } from '../../users/get-user.js';
import { searchGroups } from '../../users/search-groups.js';
import { updateUser } from '../../users/update-user.js';
import { actorOf } from '../authentication.js';
import { deleteByKey, readByKey } from '../route-shapes.js';
import { createOneOrMany, CreatedOneOrMany, OneOrMany } from '../one-or-many.js';
import { IdParams, LoginResponse, Success, UserResult, withErrors } from '../schemas.js';
import { EXAMPLE_IDS } from '../../core/examples.js';
import { answerSuccess } from '../answers.js';
import {
  ActivateBody,
  GroupSearchBody,
  NEW_USER_EXAMPLE,
  NewUser,
  SignatureImagesBody,
  UpdateUserBody,
} from '../../users/contract.js';

const ImageEntries = Type.Array(Type.Object({ imageId: Type.String(), name: Type.String() }));

export const SignatureImagesAnswer = Type.Object(
  {
    status: Type.Literal('SUCCESS'),
    signature: ImageEntries,
    initials: ImageEntries,
  },
  {
    examples: [
      {
        status: 'SUCCESS',
        signature: [{ imageId: EXAMPLE_IDS.imageId, name: 'My signature' }],
        initials: [],
      },
    ],
  },
);
export const SIGNATURE_IMAGES_RULES = `Each list sent replaces \`user.config.signature\` or \`user.config.initials\` (\`[]\` clears it; a list left out stays). \`signature\` takes only uploads from POST /files/signature and \`initials\` only uploads from POST /files/initials: any other file, someone else’s, or an unknown id is 400 FILE_NOT_USABLE naming the field (\`signature[0].imageId\`). \`name\` defaults to the name it had, else the upload’s file name. Answers both lists as they now are.`;

const Created = Type.Object({
  id: Type.String(),
  activationToken: Type.Optional(
    Type.String({
      description: 'Only when created without a password: give it to the user for PUT /users/activate.',
    }),
  ),
});

const Groups = Type.Object(
  {
    total: Type.Integer(),
    from: Type.Integer(),
    results: Type.Array(
      Type.Object({
        id: Type.String(),
        name: Type.String(),
        type: Type.Literal('organization'),
        createDate: Type.String(),
        userCount: Type.Optional(Type.Integer({ description: 'Administrators and members.' })),
        liteUserCount: Type.Optional(Type.Integer({ description: 'Read, prepare and sign roles.' })),
      }),
    ),
  },
  {
    examples: [
      {
        total: 1,
        from: 0,
        results: [
          {
            id: EXAMPLE_IDS.organization,
            name: 'Sales',
            type: 'organization',
            createDate: '2026-03-01T08:00:00.000Z',
            userCount: 12,
            liteUserCount: 3,
          },
        ],
      },
    ],
  },
);

/** Administration of accounts and groups. */
export function userRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/users',
      {
        schema: {
          tags: ['users'],
          operationId: 'createUsers',
          summary: 'Create users (administrators)',
          description:
            'One user object answers `{id}`; an array of up to 100 answers `{results:[{id}]}` and is created all or none (413 beyond 100). Without `organization` a user joins the creator’s organization; without `password` the answer carries an `activationToken` for PUT /users/activate. An administrator never grants a role above their own nor rights they do not hold. `photo` is an unused upload of the caller from POST /files/photo: a used id (one photo per record, ever) or one from another upload endpoint is 400 FILE_NOT_USABLE naming the field (`photo`, or `[2].photo` in an array).',
          body: OneOrMany(NewUser, { examples: [NEW_USER_EXAMPLE] }),
          response: withErrors({
            200: CreatedOneOrMany(Created, { examples: [{ id: 'f2d8c1a4-6b3e-4f7a-9c05-2e1d8b4a7f36' }] }),
            409: Type.Ref('ErrorBody'),
            413: Type.Ref('ErrorBody'),
          }),
        },
      },
      async (request) => {
        const actor = actorOf(request);
        return createOneOrMany(request.body, (users, options) => createUsers(deps, actor, users, options));
      },
    );

    readByKey(app, deps, {
      path: '/users/:id',
      tag: 'users',
      operationId: 'getUser',
      summary: 'Read a user',
      description: 'A user reads themselves (`me` works too); administrators read the users they manage.',
      answer: UserResult,
      read: getUser,
    });

    app.put(
      '/users/:id',
      {
        schema: {
          tags: ['users'],
          operationId: 'updateUser',
          summary: 'Change a user (administrators)',
          description:
            '`status` suspended blocks login and every existing session and API key at once; active restores access. A new `password` ends the user’s sessions. A new `photo` follows the rules of POST /users (sending the current one again is no change); `null` removes it.',
          params: IdParams,
          body: UpdateUserBody,
          response: withErrors({ 200: Success }),
        },
      },
      async (request) => answerSuccess(updateUser(deps, actorOf(request), request.params.id, request.body)),
    );

    app.put(
      '/users/:id/upload',
      {
        schema: {
          tags: ['users'],
          operationId: 'assignUserImages',
          summary: 'Assign a user’s signature and initials images',
          description: `\`{signature?: [{imageId, name?}], initials?: [{imageId, name?}]}\`. The user themselves (\`me\` works too), or an administrator for a user they manage (anyone else: 404). ${SIGNATURE_IMAGES_RULES} An administrator may assign the user’s uploads or images the administrator uploaded: those pass to the user (they leave the administrator’s lists, and only the user signs with them).`,
          params: IdParams,
          body: SignatureImagesBody,
          response: withErrors({ 200: SignatureImagesAnswer }),
        },
      },
      async (request) => ({
        status: 'SUCCESS' as const,
        ...(await assignSignatureImages(deps, actorOf(request), request.params.id, request.body)),
      }),
    );

    deleteByKey(app, deps, {
      path: '/users/:id',
      tag: 'users',
      operationId: 'deleteUser',
      summary: 'Delete a user for good (administrators)',
      remove: deleteUser,
    });

    app.put(
      '/users/activate',
      {
        config: { auth: 'none' },
        schema: {
          tags: ['users'],
          operationId: 'activateUser',
          summary: 'Activate an account created without a password',
          description:
            'Sets the password with the activation token and answers a Login response (`returnToken` as on POST /login).',
          body: ActivateBody,
          response: withErrors({ 200: LoginResponse }),
        },
      },
      async (request) => {
        const { response } = await activateUser(deps, {
          activationToken: request.body.activationToken,
          password: request.body.password,
          requestId: request.id,
        });
        if (request.body.returnToken === false) delete response.token;
        return response;
      },
    );

    app.post(
      '/groups/search',
      {
        schema: {
          tags: ['users'],
          operationId: 'searchGroups',
          summary: 'Search groups (organizations)',
          description:
            'A group is an organization of the tenant. `includeUserCount` adds `userCount` (administrators and members) and `liteUserCount` (read, prepare and sign roles).',
          body: GroupSearchBody,
          response: withErrors({ 200: Groups }),
        },
      },
      async (request) => searchGroups(deps, actorOf(request), request.body ?? {}),
    );
  };
}
