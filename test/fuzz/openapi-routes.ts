/**
 * The routes of the served OpenAPI document, with what a request to each may carry: path and query
 * parameters and the JSON body schema ($refs resolved). Routes without a JSON body that take POST or
 * PUT are the multipart uploads (their parts are described in prose only).
 */

// The OpenAPI document is JSON Schema, walked generically.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Schema = Record<string, any>;

export interface Param {
  name: string;
  schema: Schema;
  required: boolean;
}

export interface Route {
  method: string;
  /** The OpenAPI path, `{name}` for parameters. */
  path: string;
  pathParams: Param[];
  queryParams: Param[];
  body: Schema | undefined;
}

export function routeKey(route: Pick<Route, 'method' | 'path'>): string {
  return `${route.method} ${route.path}`;
}

export function routesOf(document: Schema): Route[] {
  const resolve = (schema: Schema | undefined, seen = 0): Schema | undefined => {
    if (!schema || seen > 20) return schema;
    if (typeof schema.$ref === 'string') {
      const target = schema.$ref
        .replace(/^#\//, '')
        .split('/')
        .reduce((node: Schema | undefined, key: string) => node?.[key], document);
      return resolve(target, seen + 1);
    }
    return schema;
  };
  const deep = (schema: Schema | undefined, depth = 0): Schema | undefined => {
    const node = resolve(schema);
    if (!node || typeof node !== 'object' || depth > 30) return node;
    const out: Schema = Array.isArray(node) ? [] : {};
    for (const [key, value] of Object.entries(node))
      out[key] = value && typeof value === 'object' ? deep(value, depth + 1) : value;
    return out;
  };
  const routes: Route[] = [];
  for (const [path, operations] of Object.entries<Schema>(document.paths ?? {})) {
    for (const [method, operation] of Object.entries<Schema>(operations)) {
      if (!['get', 'post', 'put', 'delete', 'patch'].includes(method)) continue;
      const params: Schema[] = (operation.parameters ?? []).map((p: Schema) => resolve(p));
      const of = (where: string): Param[] =>
        params
          .filter((p) => p.in === where)
          .map((p) => ({ name: p.name, schema: deep(p.schema) ?? {}, required: p.required === true }));
      routes.push({
        method: method.toUpperCase(),
        path,
        pathParams: of('path'),
        queryParams: of('query'),
        body: deep(operation.requestBody?.content?.['application/json']?.schema),
      });
    }
  }
  return routes;
}
