import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static, type TProperties, type TSchema } from 'typebox';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { answerSuccess } from './answers.js';
import { actorOf } from './authentication.js';
import { IdParams, Success, withErrors } from './schemas.js';

/**
 * The route shapes many capabilities repeat, each registered the one way: an authenticated call of a
 * use case `(deps, actor, input)` with one input taken from the request. The schema keys keep the
 * order the routes always wrote them in (tags, summary, description, the input, response), so the
 * OpenAPI description is the same as when each route spelled it out.
 */

/** The app a route plugin of this project is given. */
export type RouteApp = Parameters<FastifyPluginAsyncTypebox>[0];

/** What the OpenAPI description says of a route. */
interface RouteDoc {
  path: string;
  tag: string;
  /** The operation's stable name (verb-noun, e.g. `getStamp`): generated SDKs name their methods after it. */
  operationId: string;
  summary: string;
  description?: string;
}

/** A route that names one record in its path: `/x/:id` by default, or another parameter `key` of `params`. */
interface ByKey {
  /** The path parameters (default IdParams). */
  params?: TSchema;
  /** The path parameter the use case is given (default `id`). */
  key?: string;
}

type UseCase<I> = (deps: Deps, actor: Actor, input: I) => Promise<unknown>;

const docOf = ({ tag, operationId, summary, description }: RouteDoc) => ({
  tags: [tag],
  operationId,
  summary,
  ...(description === undefined ? {} : { description }),
});

/** GET `path` answering `answer`: `read(deps, actor, request.params[key])`. */
export function readByKey(
  app: RouteApp,
  deps: Deps,
  route: RouteDoc & ByKey & { answer: TSchema; read: UseCase<string> },
) {
  const { path, params = IdParams, key = 'id', answer, read } = route;
  app.get(
    path,
    { schema: { ...docOf(route), params, response: withErrors({ 200: answer }) } },
    async (request) => read(deps, actorOf(request), (request.params as Record<string, string>)[key]!),
  );
}

/** DELETE `path` answering `{status: "SUCCESS"}` once `remove(deps, actor, request.params[key])` is done. */
export function deleteByKey(
  app: RouteApp,
  deps: Deps,
  route: RouteDoc & ByKey & { remove: UseCase<string> },
) {
  const { path, params = IdParams, key = 'id', remove } = route;
  app.delete(
    path,
    { schema: { ...docOf(route), params, response: withErrors({ 200: Success }) } },
    async (request) =>
      answerSuccess(remove(deps, actorOf(request), (request.params as Record<string, string>)[key]!)),
  );
}

/** GET `path` with `?from&size` (`paging`, nothing else) answering the page `answer`: `list(deps, actor, request.query)`. */
export function pagedList<P extends TProperties>(
  app: RouteApp,
  deps: Deps,
  route: RouteDoc & { paging: P; answer: TSchema; list: UseCase<Static<ReturnType<typeof Type.Object<P>>>> },
) {
  const { path, paging, answer, list } = route;
  const querystring = Type.Object(paging, { additionalProperties: false });
  app.get(
    path,
    { schema: { ...docOf(route), querystring, response: withErrors({ 200: answer }) } },
    async (request) => list(deps, actorOf(request), request.query as Static<typeof querystring>),
  );
}

/**
 * POST `path` with the JSON body `body`, answering `answers` (with the usual errors):
 * `call(deps, actor, request.body)`.
 */
export function postBody<B extends TSchema>(
  app: RouteApp,
  deps: Deps,
  route: RouteDoc & { body: B; answers: Record<number, TSchema>; call: UseCase<Static<B>> },
) {
  const { path, body, answers, call } = route;
  app.post(path, { schema: { ...docOf(route), body, response: withErrors(answers) } }, async (request) =>
    call(deps, actorOf(request), request.body as Static<B>),
  );
}
