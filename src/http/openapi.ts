import type { SwaggerOptions } from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import type { Config } from '../base/config.js';
import type { AuthMode } from './authentication.js';

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

/** The OpenAPI description of the API (served at /api/v1/openapi.json and shown at /api/v1/docs). */
export function openApiOptions(config: Config): SwaggerOptions {
  const credentials: Record<string, string[]>[] = [{ bearer: [] }, { token: [] }, { cookie: [] }];
  return {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Signery API', version: '1.0.0', description: DESCRIPTION },
      servers: [{ url: config.publicUrl }],
      components: {
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
      const documented = { ...schema };
      if (schema.multipartBody) documented.body = schema.multipartBody;
      const auth: AuthMode = route.config?.auth ?? 'required';
      if (auth === 'none') documented.security = [];
      // `{}` first: the call also answers without a credential (GET /login says `logged: false`).
      if (auth === 'optional') documented.security = [{}, ...credentials];
      return { schema: documented, url };
    },
  };
}

/**
 * The docs page (Swagger UI) at `routePrefix`, readable on a phone: its HTML gets the viewport the
 * bundled page lacks (without it a phone lays the page out 980 px wide and shrinks it unreadable),
 * and a style sheet that drops the bar for loading other descriptions and lets long paths wrap.
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
