import type { SwaggerOptions } from '@fastify/swagger';
import type { Config } from '../core/config.js';

/** The OpenAPI description of the API (served at /api/v1/openapi.json and shown at /api/v1/docs). */
export function openApiOptions(config: Config): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Signery API',
        version: '1.0.0',
        description:
          'Document signing service. Every call except login takes the session token or API key in the `token` query parameter (or the session cookie, or `Authorization: Bearer`). Every error is `{statusCode, error, message, code}`, also those made before routing (a malformed URL or request, headers over the limit), and none repeats the URL or a token; a route that does not exist is 404 with or without a token. Limits of one request: request line and headers 16 KiB (431); JSON bodies 10 MiB (413) and 64 levels of nesting (400); multipart: one file, 20 fields of at most 1 MiB, 25 parts (413), and a boundary of 1 to 70 characters (400). Calls are rate limited per API key, session, recipient link or session, and (without a valid credential) client address: every answer carries the IETF `RateLimit-Policy` and `RateLimit` fields (`"api-key";q=1000;w=60`, `"api-key";r=998;t=42`), and a caller over its limit gets 429 RATE_LIMITED with `Retry-After`.',
      },
      servers: [{ url: config.publicUrl }],
      components: {
        securitySchemes: {
          token: { type: 'apiKey', in: 'query', name: 'token' },
          cookie: { type: 'apiKey', in: 'cookie', name: 'signery_token' },
        },
      },
      security: [{ token: [] }, { cookie: [] }],
    },
  };
}
