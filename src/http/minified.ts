import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { Type, type TSchema } from 'typebox';

/**
 * The minified interface: the most used endpoints answer a reduced representation
 * with fewer properties, at the same URLs, when asked with `minified=true`. The reduced form is a
 * subset of the full one: the same property paths, fewer of them, so a client reads both alike. Each
 * reduced shape is one TypeBox schema below; it says what is kept (the answer is cut down to it and
 * serialized by it), it is a named component schema of the OpenAPI document (`MinifiedDocuments`…),
 * and the `minified` parameter's description is written from it. Services never know about it: the
 * cut is made just before serialization.
 *
 * How the OpenAPI document says it (decided here): OpenAPI cannot make an answer's schema depend on
 * a query parameter, and a union of both shapes in the 200 answer made every typed client check the
 * type before reading `waitingFor`, even when it never sends `minified`. So the 200 answer is the
 * full shape, the one a client gets unless it asks; the reduced shape is its own component, named by
 * the `minified` parameter (`x-minified-response`, a `$ref`) and in the 200 answer's description,
 * and the typed client (clients/typescript) types a minified call's answer by that name
 * (`MinifiedAnswer<'MinifiedDocuments'>`). A separate media type was not chosen: the server chooses by the query, not by
 * `Accept`, and a second JSON media type would make generated clients union the two again.
 */

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const MinifiedUser = Type.Object({
  id: Type.String(),
  name: Type.String(),
  displayName: Nullable(Type.String()),
  email: Nullable(Type.String()),
  role: Type.String(),
});

/** POST /login and GET /login: whether the session works, its token and who it is. */
const MinifiedLogin = Type.Object(
  {
    logged: Type.Boolean(),
    isUnlocked: Type.Optional(Type.Boolean()),
    token: Type.Optional(Type.String()),
    tenant: Type.Optional(Type.String()),
    user: Type.Optional(MinifiedUser),
  },
  { $id: 'MinifiedLogin', description: 'The session, minified (`minified=true`).' },
);

/** POST /files/saveFile: the id to use, what the file is, and anchors when some were asked for. */
const MinifiedFileRecord = Type.Object(
  {
    file: Type.Object({
      id: Type.String(),
      documentname: Type.String(),
      mimetype: Type.String(),
      size: Type.Integer(),
    }),
    anchorPositions: Type.Optional(Type.Array(Type.Unknown())),
  },
  { $id: 'MinifiedFileRecord', description: 'The stored file, minified (`minified=true`).' },
);

/** A document (or folder) in a list: id, title, state, version and the main file to download. */
const MinifiedDocument = Type.Object({
  documentId: Type.String(),
  documentTitle: Type.String(),
  documentType: Type.String(),
  _version: Type.Integer(),
  isSigned: Type.Boolean(),
  workflow: Type.Object({ shareStateName: Type.Optional(Type.String()) }),
  pdfFile: Type.Optional(Type.Object({ content: Type.String() })),
  barcode: Nullable(Type.String()),
  modifyDate: Type.String(),
});

const MinifiedDocuments = Type.Object(
  { results: Type.Array(MinifiedDocument) },
  { $id: 'MinifiedDocuments', description: 'The document in a list of one, minified (`minified=true`).' },
);

const MinifiedSearch = Type.Object(
  {
    from: Type.Integer(),
    size: Type.Integer(),
    total: Type.Integer(),
    results: Type.Array(MinifiedDocument),
  },
  { $id: 'MinifiedSearch', description: 'A page of search results, minified (`minified=true`).' },
);

/** POST /share: which share went to whom, for what, and where it stands. */
const MinifiedShares = Type.Array(
  Type.Object({
    shareId: Type.String(),
    shareType: Type.String(),
    status: Type.String(),
    isActive: Type.Boolean(),
    sharedWith: Type.Array(Type.String()),
    sharedObjectEsId: Type.String(),
    validUntil: Nullable(Type.String()),
    order: Type.Integer(),
  }),
  { $id: 'MinifiedShares', description: 'The shares made, minified (`minified=true`).' },
);

/** The endpoints with a minified form (`METHOD path` under /api/v1) and what that form keeps. */
export const MINIFIED: Readonly<Record<string, TSchema>> = {
  'POST /login': MinifiedLogin,
  'GET /login': MinifiedLogin,
  'POST /files/saveFile': MinifiedFileRecord,
  'POST /documents': MinifiedDocuments,
  'GET /documents/:documentId': MinifiedDocuments,
  'POST /search': MinifiedSearch,
  'POST /share': MinifiedShares,
};

interface SchemaNode {
  type?: unknown;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
}

/**
 * Keeps of `value` only what `schema` names: object properties by name, array elements one by one;
 * anything else (a string, a union) is kept as it is.
 */
export function minify(value: unknown, schema: TSchema): unknown {
  const node = schema as SchemaNode;
  if (node.type === 'array' && node.items && Array.isArray(value)) {
    const items = node.items as TSchema;
    return value.map((item) => minify(item, items));
  }
  if (node.properties && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const source = value as Record<string, unknown>;
    const kept: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(node.properties)) {
      if (key in source) kept[key] = minify(source[key], child);
    }
    return kept;
  }
  return value;
}

/** `results[].documentId, results[].workflow.shareStateName, ...`: the kept paths, for the docs. */
export function keptPaths(schema: TSchema, prefix = ''): string[] {
  const node = schema as SchemaNode;
  if (node.type === 'array' && node.items) return keptPaths(node.items, `${prefix}[]`);
  if (!node.properties) return [prefix];
  return Object.entries(node.properties).flatMap(([key, child]) =>
    keptPaths(child as TSchema, prefix === '' ? key : `${prefix}.${key}`),
  );
}

function minifiedParameter(schema: TSchema): TSchema {
  const paths = keptPaths(schema).map((p) => `\`${p.replace(/^\[\]\./, '')}\``);
  return Type.Optional(
    Type.Boolean({
      default: false,
      description: `Minified interface: \`true\` answers a reduced representation with only ${paths.join(', ')} (the same paths as the full answer, fewer properties): the schema ${minifiedSchemaName(schema)} instead of the 200 answer's.`,
    }),
  );
}

/** Adds `minified` to a route's query schema, or gives it one; other unknown keys stay refused. */
function withMinifiedQuery(querystring: unknown, parameter: TSchema): TSchema {
  const existing = querystring as (SchemaNode & Record<string, unknown>) | undefined;
  if (!existing) return Type.Object({ minified: parameter }, { additionalProperties: false });
  if (existing.type !== 'object' || !existing.properties) {
    throw new Error('A minified route needs an object query schema');
  }
  return { ...existing, properties: { ...existing.properties, minified: parameter } };
}

/** The name of a reduced shape in the OpenAPI document's component schemas (its `$id`). */
export function minifiedSchemaName(shape: TSchema): string {
  return (shape as { $id: string }).$id;
}

/**
 * The `minified` parameter's link to its reduced shape (see the top of this file): a route schema
 * key (fastify-swagger copies `x-` keys to the operation), which the document moves onto the
 * parameter (http/openapi.ts).
 */
export const MINIFIED_RESPONSE = 'x-minified-response';

type Hook = (request: FastifyRequest, reply: FastifyReply, payload: unknown) => Promise<unknown>;

function asList<T>(hooks: T | T[] | undefined): T[] {
  if (hooks === undefined) return [];
  return Array.isArray(hooks) ? hooks : [hooks];
}

/**
 * Gives the routes of MINIFIED declared in this plugin (after this call) their `minified` query
 * parameter, their alternative 200 answer in the OpenAPI document, and the cut itself.
 *
 * @example
 * return async (app) => {
 *   useMinified(app);
 *   app.post('/documents', { schema: { ... } }, handler); // now also answers ?minified=true
 * };
 */
export function useMinified(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions & { routePath?: string }) => {
    const methods = asList(route.method);
    const shape = methods.map((m) => MINIFIED[`${m} ${route.routePath ?? route.url}`]).find(Boolean);
    if (!shape) return;
    // A copy: a schema object may be shared with routes that have no minified form.
    const schema = { ...route.schema };
    route.schema = Object.assign(
      { ...schema, querystring: withMinifiedQuery(schema.querystring, minifiedParameter(shape)) },
      { [MINIFIED_RESPONSE]: { $ref: `#/components/schemas/${minifiedSchemaName(shape)}` } },
    );
    // The 200 schema (the full shape) would refuse the reduced answer's missing fields: a reduced
    // answer is serialized by its own shape (its `$id` left out: it is not one of the app's schemas).
    const { $id: _id, ...reduced } = shape as TSchema & { $id?: string };
    const cut: Hook = async (request, reply, payload) => {
      const query = request.query as { minified?: boolean } | undefined;
      if (query?.minified !== true || reply.statusCode >= 300) return payload;
      reply.serializer((kept: unknown) => reply.serializeInput(kept as Record<string, unknown>, reduced));
      return minify(payload, shape);
    };
    route.preSerialization = [...asList(route.preSerialization), cut] as RouteOptions['preSerialization'];
  });
}
