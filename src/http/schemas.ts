import { Type, type TSchema } from 'typebox';
import { LOGIN_EXAMPLE, USER_EXAMPLE } from '../core/examples.js';
import { Id } from '../core/common-contract.js';

/** Schemas shared by many routes. */
export const ErrorBodySchema = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String(),
    message: Type.String(),
    code: Type.String({ description: 'Machine-readable code: VALIDATION_ERROR, UNAUTHENTICATED, ...' }),
  },
  {
    $id: 'ErrorBody',
    description: 'An error: every error the API answers has this shape.',
    examples: [
      {
        statusCode: 409,
        error: 'Conflict',
        message: 'Version mismatch',
        code: 'VERSION_MISMATCH',
      },
    ],
  },
);

export const Success = Type.Object(
  { status: Type.Literal('SUCCESS') },
  { description: 'Done.', examples: [{ status: 'SUCCESS' }] },
);

/**
 * `schema` with example values for the OpenAPI description (a copy: shared schemas keep their own).
 * fastify-swagger shows a request body's or an answer's top-level `examples` as its media examples.
 */
export function withExamples<T extends TSchema>(schema: T, ...examples: unknown[]): T {
  return { ...schema, examples };
}

/** The usual error answers of an authenticated route, for the OpenAPI description. */
export function withErrors<T extends Record<number, TSchema>>(responses: T): T & Record<number, TSchema> {
  const ref = Type.Ref('ErrorBody');
  return { 400: ref, 401: ref, 403: ref, 404: ref, 429: ref, ...responses };
}

/** The path parameters of `…/:id` routes. */
export const IdParams = Type.Object({ id: Id });

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A user as GET /users/{id} and the Login response show them (never a password or a secret). */
export const UserResult = Type.Object(
  {
    id: Type.String(),
    name: Type.String({ description: 'The login name.' }),
    displayName: Nullable(Type.String()),
    email: Nullable(Type.String()),
    role: Type.String(),
    organization: Type.String({ description: 'The organization’s id.' }),
    status: Type.String({ description: '`active` or `suspended`.' }),
    photo: Nullable(Type.String()),
    rights: Type.Array(Type.String()),
    config: Type.Object(
      {
        signature: Type.Array(Type.Object({ imageId: Type.String(), name: Type.String() })),
      },
      {
        additionalProperties: true,
        description: 'The user’s preferences (PUT /configuration), with their signature and initials images.',
      },
    ),
    certificates: Type.Array(
      Type.Object(
        {
          id: Type.String({ description: 'Lowercase hex SHA-256 of the DER: the `certificateHash`.' }),
          subject: Type.String(),
          issuer: Type.String(),
          serialNumber: Type.String(),
          keyAlgorithm: Type.String(),
          notBefore: Type.String(),
          notAfter: Type.String(),
          chainLength: Type.Integer(),
          createdAt: Type.String(),
        },
        { additionalProperties: true },
      ),
      { description: 'Personal certificates for two-step signing (POST /users/{id}/certificate).' },
    ),
    authenticationFactors: Type.Array(Type.String()),
    hasPassword: Type.Boolean(),
    createdAt: Type.String(),
  },
  { additionalProperties: true, examples: [USER_EXAMPLE] },
);

/** What POST /login, GET /login and the sign-in through an identity provider answer. */
export const LoginResponse = Type.Object(
  {
    logged: Type.Boolean({ description: 'false: no token, or one that is unknown or expired.' }),
    hasPassword: Type.Optional(Type.Boolean()),
    isUnlocked: Type.Optional(
      Type.Boolean({
        description: 'false: an account with MFA; unlock with POST /login/totp or /login/recovery.',
      }),
    ),
    token: Type.Optional(Type.String({ description: 'The session token (unless `returnToken: false`).' })),
    tenant: Type.Optional(Type.String()),
    rights: Type.Optional(Type.Array(Type.String())),
    settings: Type.Optional(Type.Object({}, { additionalProperties: true })),
    user: Type.Optional(UserResult),
  },
  { description: 'The session: whether it works, its token, and who it is.', examples: [LOGIN_EXAMPLE] },
);
