import { pathToFileURL } from 'node:url';
import { operationsOf, schemaValidator, type JsonSchema, type OpenApiDocument } from './openapi-walk.js';

/**
 * Runs a program written with the typed client (argv[2]: the walkthrough of docs/integration-guide.md)
 * against the server at SIGNERY_URL, and checks every JSON answer it gets against the schema the
 * OpenAPI description gives for that operation and status: the types the client was generated with
 * are what the server answers. Exits 1 naming each answer that does not fit (or an undocumented
 * status), after the program; prints how many answers were checked.
 */

const base = process.env.SIGNERY_URL;
const program = process.argv[2];
if (!base || !program) throw new Error('usage: SIGNERY_URL=… walkthrough-runner.ts <program.ts>');

const document = (await (await fetch(new URL('/api/v1/openapi.json', base))).json()) as OpenApiDocument;
const validate = schemaValidator(document);

/** The operations, most literal path first, so `/documents/owner` wins over `/documents/{version}`. */
const routes = operationsOf(document)
  .map(({ key, operation }) => {
    const [method, path] = key.split(' ') as [string, string];
    const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    return { method, path, pattern, operation, params: (path.match(/\{/g) ?? []).length };
  })
  .sort((a, b) => a.params - b.params);

const problems: string[] = [];
let checked = 0;
const send = globalThis.fetch;
globalThis.fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const request = new Request(input, init);
  const response = await send(request);
  const { pathname } = new URL(request.url);
  const route = routes.find((r) => r.method === request.method && r.pattern.test(pathname));
  if (!route || !pathname.startsWith('/api/v1/')) return response;
  const answer = route.operation.responses?.[String(response.status)];
  if (!answer) {
    problems.push(`${request.method} ${route.path} answered ${response.status}, which it does not document`);
    return response;
  }
  const type = response.headers.get('content-type')?.split(';')[0] ?? '';
  const schema: JsonSchema | undefined = answer.content?.['application/json']?.schema;
  if (type === 'application/json' && schema) {
    checked += 1;
    for (const error of validate(schema, await response.clone().json()))
      problems.push(`${request.method} ${route.path} ${response.status}: ${error}`);
  }
  return response;
};

await import(pathToFileURL(program).href);
console.log(`${checked} answers checked against the OpenAPI description`);
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
