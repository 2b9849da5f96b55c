import { Type, type TSchema } from 'typebox';

/** Schemas shared by many routes. */
export const ErrorBodySchema = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String(),
    message: Type.String(),
    code: Type.String({ description: 'Machine-readable code: VALIDATION_ERROR, UNAUTHENTICATED, ...' }),
  },
  { $id: 'ErrorBody', description: 'Every error has this shape (Contract: Errors).' },
);

export const Success = Type.Object({ status: Type.Literal('SUCCESS') });

/** The usual error answers of an authenticated route, for the OpenAPI description. */
export function withErrors<T extends Record<number, TSchema>>(responses: T): T & Record<number, TSchema> {
  const ref = Type.Ref('ErrorBody');
  return { 400: ref, 401: ref, 403: ref, 404: ref, 429: ref, ...responses };
}

export const Name = Type.String({ minLength: 1, maxLength: 200 });

/** The id of a record (a contact, a stamp, a user, a file, ...) where a request names one. */
export const Id = Type.String({ minLength: 1, maxLength: 100 });
/** Which page of a list or search: from offset `from`, `size` (at most 100) results. */
export const Paging = {
  from: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
  size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
};

/** The path parameters of `…/:id` routes. */
export const IdParams = Type.Object({ id: Id });
export const Password = Type.String({ minLength: 8, maxLength: 1024 });

/** What POST /login, GET /login and the sign-in through an identity provider answer. */
export const LoginResponse = Type.Object(
  {
    logged: Type.Boolean(),
    hasPassword: Type.Optional(Type.Boolean()),
    isUnlocked: Type.Optional(Type.Boolean()),
    token: Type.Optional(Type.String()),
    tenant: Type.Optional(Type.String()),
    rights: Type.Optional(Type.Array(Type.String())),
    settings: Type.Optional(Type.Object({}, { additionalProperties: true })),
    user: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { description: 'Login response (spec: Resources, Login response).' },
);
