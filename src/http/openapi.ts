import type { SwaggerOptions } from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { IsOptional, type TSchema } from 'typebox';
import type { Config } from '../base/config.js';
import type { AuthMode } from './authentication.js';
import { MINIFIED, MINIFIED_RESPONSE, minifiedSchemaName } from './minified.js';

declare module 'fastify' {
  interface FastifySchema {
    /**
     * The parts of a multipart/form-data request, for the OpenAPI description only: uploads are
     * streamed and read part by part by the route (http/multipart.ts), never validated as one body.
     */
    multipartBody?: TSchema;
  }
}

const DESCRIPTION = `Signery's REST API: upload files, create documents from them, share them for signing with users and external recipients, sign and seal them with PAdES signatures, and hear about every change through webhooks.

**Authentication.** Log in with \`POST /api/v1/login\`, or create a long-lived API key with \`POST /api/v1/api/key\`, and send the token with every other call as \`Authorization: Bearer <token>\`, as the \`token\` query parameter, or through the session cookie that \`POST /login\` sets with \`cookie: true\`. External recipients (people without an account) use the token of the link they were mailed (\`PUBLIC_URL/s/<token>\`), or the recipient session that \`POST /share/unlock\` answers for a protected share.

**Errors.** Every error is JSON \`{statusCode, error, message, code}\`, including those made before a route is found, and no message repeats the URL or a token. \`code\` is machine-readable, for example VALIDATION_ERROR and FILE_NOT_USABLE (400), UNAUTHENTICATED (401), MFA_REQUIRED and FORBIDDEN (403), NOT_FOUND (404: also what you get for something you may not see), VERSION_MISMATCH (409: read the document again and retry with its \`_version\`), CONSENT_CHANGED (409: the consent statement was reworded, show the new one), LIMIT_EXCEEDED (413), RATE_LIMITED and REMINDER_TOO_SOON (429, with \`Retry-After\`), UNAVAILABLE (503: send it again). Validation messages name the field: \`Request validation errors: BODY ERRORS: "signatures[0].position.percentX" must be less than or equal to 1\`.

**Limits of one request.** Request line and headers 16 KiB (431); JSON bodies 10 MiB (413) and 64 levels of nesting (400); multipart: one file, 20 fields of at most 1 MiB, 25 parts (413), a boundary of 1 to 70 characters (400).

**Rate limits.** Calls count per API key, session, recipient link or session, and (without a valid credential) per client address. Every answer carries the IETF \`RateLimit-Policy\` and \`RateLimit\` fields (\`"api-key";q=1000;w=60\`, \`"api-key";r=998;t=42\`); past the limit the answer is 429 RATE_LIMITED with \`Retry-After\`.

**Typed client.** The repository's \`clients/typescript\` package is generated from this description (openapi-typescript types with openapi-fetch).`;

/**
 * The tags operations are grouped by, each declared with what it covers (a tag an operation uses and
 * this list lacks fails test/docs/openapi-document.test.ts).
 */
export const TAGS: { name: string; description: string }[] = [
  {
    name: 'health',
    description: 'Probes for load balancers and orchestrators: is the process up, do its stores answer.',
  },
  { name: 'auth', description: 'Sessions (log in, MFA, identity providers) and API keys.' },
  { name: 'users', description: 'Accounts, their images and personal certificates, and groups.' },
  {
    name: 'settings',
    description: 'The caller’s configuration, tenant properties and counters, the WOPI client.',
  },
  {
    name: 'files',
    description: 'Uploads (files, photos, signature and initials images) and downloads by file id.',
  },
  {
    name: 'documents',
    description: 'Create, read, change, merge, transfer and delete documents, and their kept revisions.',
  },
  { name: 'folders', description: 'Folders of documents; access to a folder is inherited by what it holds.' },
  { name: 'templates', description: 'Templates documents are made from.' },
  { name: 'drafts', description: 'Documents being prepared by their author.' },
  { name: 'definitions', description: 'Document definitions: the fields and rules of a document type.' },
  { name: 'attachments', description: 'The files attached to documents and drafts.' },
  {
    name: 'sharing',
    description:
      'Share documents for signing, and what recipients (users and people without an account) do with them.',
  },
  { name: 'signing', description: 'Sign, seal, annotate and verify PAdES signatures, in one step or two.' },
  { name: 'search', description: 'Search documents and folders, locate one, transaction reports.' },
  { name: 'audit', description: 'Audit logs and a document’s audit-trail PDF.' },
  { name: 'stamps', description: 'Personal and organization stamps used in signatures.' },
  { name: 'contacts', description: 'The caller’s contacts.' },
  { name: 'enums', description: 'Lists of values (enums) for document fields.' },
  { name: 'webhooks', description: 'Webhooks, their deliveries, and the events feed for those who poll.' },
  {
    name: 'agents',
    description:
      'AI agents: the MCP server (/mcp) and the actions agents proposed, which a person approves or rejects.',
  },
];

/**
 * Response headers every operation documents (components.headers), as http/rate-limits.ts,
 * http/request-id.ts and the error handler send them.
 */
const HEADERS = {
  'X-Request-Id': {
    description:
      'The id of the request: the `X-Request-Id` the caller sent when it is a short token (`[A-Za-z0-9._:-]`, at most 64), else a new one. Quote it when reporting a problem: it names the request in the server’s logs.',
    schema: { type: 'string', maxLength: 64 },
  },
  'RateLimit-Policy': {
    description:
      'The rate limit that counts this call (IETF RateLimit header fields): its name, quota `q` and window `w` in seconds, e.g. `"api-key";q=1000;w=60`. Sent when the installation limits rates (the default).',
    schema: { type: 'string' },
  },
  RateLimit: {
    description:
      'What is left of that limit: remaining calls `r` and seconds `t` until the window resets, e.g. `"api-key";r=998;t=42`.',
    schema: { type: 'string' },
  },
  'Retry-After': {
    description: 'Seconds to wait before sending the call again.',
    schema: { type: 'integer', minimum: 1 },
  },
} as const;

const headerRef = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

/** Schema keys the document reads and then drops (set by `transform` from the route's config). */
const NOT_RATE_LIMITED = 'x-not-rate-limited';
const OPTIONAL_BODY = 'x-optional-body';

/** The OpenAPI description of the API (served at /api/v1/openapi.json and shown at /api/v1/docs). */
export function openApiOptions(config: Config): SwaggerOptions {
  const credentials: Record<string, string[]>[] = [{ bearer: [] }, { token: [] }, { cookie: [] }];
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Signery API',
        version: '1.0.0',
        description: DESCRIPTION,
        license: { name: 'AGPL-3.0-or-later', identifier: 'AGPL-3.0-or-later' },
      },
      servers: [{ url: config.publicUrl }],
      tags: TAGS,
      components: {
        schemas: minifiedSchemas(),
        headers: HEADERS,
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description:
              '`Authorization: Bearer <token>`: a session token (POST /login), an API key (POST /api/key), or a recipient’s link or session token.',
          },
          token: {
            type: 'apiKey',
            in: 'query',
            name: 'token',
            description:
              'The same token in the `token` query parameter, for clients that cannot set a header.',
          },
          cookie: {
            type: 'apiKey',
            in: 'cookie',
            name: 'signery_token',
            description: 'The session cookie POST /login sets with `cookie: true` (browsers).',
          },
        },
      },
      security: credentials,
    },
    // Shared schemas keep their names (`ErrorBody`), which the generated client's types show.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
    transform: ({ schema, url, route }) => {
      if (!schema) return { schema, url };
      const documented: Record<string, unknown> = { ...schema };
      if (schema.multipartBody) documented.body = schema.multipartBody;
      const auth: AuthMode = route.config?.auth ?? 'required';
      if (auth === 'none') documented.security = [];
      // `{}` first: the call also answers without a credential (GET /login says `logged: false`).
      if (auth === 'optional') documented.security = [{}, ...credentials];
      if (route.config?.rateLimit === false) documented[NOT_RATE_LIMITED] = true;
      // A body the call may go without (`Type.Optional` at the top: POST /agent-actions/{id}/reject).
      if (IsOptional(schema.body)) documented[OPTIONAL_BODY] = true;
      return { schema: documented, url };
    },
    transformObject: (documentObject) => {
      const { openapiObject } = documentObject as { openapiObject: { paths?: Record<string, object> } };
      for (const item of Object.values(openapiObject.paths ?? {}))
        for (const operation of Object.values(item) as Operation[]) documentOperation(operation);
      return openapiObject;
    },
  };
}

interface Operation {
  parameters?: { name: string; in: string; [key: string]: unknown }[];
  responses?: Record<string, { headers?: Record<string, unknown> }>;
  requestBody?: { required?: boolean };
  [key: string]: unknown;
}

/**
 * What the route schemas cannot say of an operation: the headers of its answers (every answer has
 * X-Request-Id; a rate-limited call's answers the RateLimit fields; 429 and 503 Retry-After), a 503
 * (a store that does not answer: send it again), and the `minified` parameter's reduced shape.
 */
function documentOperation(operation: Operation): void {
  const limited = operation[NOT_RATE_LIMITED] !== true;
  delete operation[NOT_RATE_LIMITED];
  if (operation[OPTIONAL_BODY] === true && operation.requestBody) operation.requestBody.required = false;
  delete operation[OPTIONAL_BODY];
  const responses = (operation.responses ??= {});
  responses['503'] ??= {
    description: 'A store did not answer, or the node is stopping: send the call again after `Retry-After`.',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
  } as never;
  for (const [status, response] of Object.entries(responses)) {
    response.headers = {
      'X-Request-Id': headerRef('X-Request-Id'),
      ...(limited
        ? { 'RateLimit-Policy': headerRef('RateLimit-Policy'), RateLimit: headerRef('RateLimit') }
        : {}),
      ...(status === '429' || status === '503' ? { 'Retry-After': headerRef('Retry-After') } : {}),
      ...response.headers,
    };
  }
  const reduced = operation[MINIFIED_RESPONSE];
  if (reduced) {
    delete operation[MINIFIED_RESPONSE];
    const parameter = operation.parameters?.find((p) => p.name === 'minified' && p.in === 'query');
    if (parameter) parameter[MINIFIED_RESPONSE] = reduced;
  }
}

/** The reduced shapes of the minified interface, as component schemas named by their `$id`. */
function minifiedSchemas(): Record<string, never> {
  const shapes = [...new Set(Object.values(MINIFIED))];
  return Object.fromEntries(
    shapes.map((shape) => {
      const { $id: _id, ...schema } = JSON.parse(JSON.stringify(shape)) as Record<string, unknown>;
      return [minifiedSchemaName(shape), schema as never];
    }),
  );
}

/**
 * The docs page (Swagger UI) at `routePrefix`, readable on a phone: its HTML gets the viewport the
 * bundled page lacks (without it a phone lays the page out 980 px wide and shrinks it unreadable),
 * and a style sheet that drops the bar for loading other descriptions and lets long paths wrap. The
 * responses' "Links" column goes too: the description has no links, and the column only said so,
 * pushing each response past a phone's edge.
 */
export async function registerDocsPage(server: FastifyInstance, routePrefix: string): Promise<void> {
  await server.register(async (docs) => {
    docs.addHook('onSend', withViewport);
    await docs.register(fastifySwaggerUi, {
      routePrefix,
      uiConfig: { deepLinking: false },
      theme: { title: 'Signery API', css: [{ filename: 'signery.css', content: DOCS_PAGE_CSS }] },
    });
  });
}

const DOCS_PAGE_CSS = `
.swagger-ui .topbar { display: none; }
.swagger-ui .opblock .opblock-summary-path { word-break: break-word; }
.swagger-ui .response-col_links { display: none; }
@media (max-width: 600px) {
  .swagger-ui .wrapper { padding: 0 12px; }
  .swagger-ui .info { margin: 24px 0; }
  .swagger-ui .info .title { font-size: 28px; }
  .swagger-ui .scheme-container { padding: 16px 0; }
  .swagger-ui .scheme-container .schemes { flex-wrap: wrap; gap: 12px; }
  .swagger-ui .opblock .opblock-summary { flex-wrap: wrap; }
  .swagger-ui .opblock .opblock-summary-description { flex-basis: 100%; }
  .swagger-ui table { display: block; overflow-x: auto; }
  .swagger-ui .dialog-ux .modal-ux { width: calc(100% - 24px); min-width: 0; }
}
`;

const VIEWPORT = '<meta name="viewport" content="width=device-width, initial-scale=1">';

async function withViewport(
  _request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): Promise<unknown> {
  const type = reply.getHeader('content-type');
  if (typeof payload !== 'string' || typeof type !== 'string' || !type.startsWith('text/html'))
    return payload;
  return payload.replace('<meta charset="UTF-8">', `<meta charset="UTF-8">\n${VIEWPORT}`);
}
