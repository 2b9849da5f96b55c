import { Type, type TSchema, type TSchemaOptions } from 'typebox';

/**
 * Create calls that take one object or an array of them (at most 100): an array is created all or
 * none and answered `{results}` in its order; one object is answered as the one created.
 */

/** The body: one object, or a non-empty array of them. */
export function OneOrMany<T extends TSchema>(item: T, options: TSchemaOptions = {}) {
  return Type.Union([item, Type.Array(item, { minItems: 1 })], options);
}

/** The answer: the one created, or `{results}` for an array. */
export function CreatedOneOrMany<T extends TSchema>(created: T, options: TSchemaOptions = {}) {
  return Type.Union([created, Type.Object({ results: Type.Array(created) })], options);
}

/**
 * Calls `create` with the objects sent; `bulk` tells it whether they came as an array, so that its
 * errors name the field as the request spelled it (`photo`, or `[2].photo` in an array).
 */
export async function createOneOrMany<New, Created>(
  body: New | New[],
  create: (items: New[], options: { bulk: boolean }) => Promise<Created[]>,
): Promise<Created | { results: Created[] } | undefined> {
  if (Array.isArray(body)) return { results: await create(body, { bulk: true }) };
  const [created] = await create([body], { bulk: false });
  return created;
}
