import { Type } from 'typebox';

/** The words many requests use: a name, a record's id, a page of a list, a password. */
export const Name = Type.String({ minLength: 1, maxLength: 200 });

/** The id of a record (a contact, a stamp, a user, a file, ...) where a request names one. */
export const Id = Type.String({ minLength: 1, maxLength: 100 });
/** Which page of a list or search: from offset `from`, `size` (at most 100) results. */
export const Paging = {
  from: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
  size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
};

export const Password = Type.String({ minLength: 8, maxLength: 1024 });
