import { Type } from 'typebox';
import { Name } from '../core/common-contract.js';

/**
 * What the session, MFA and API key calls take: the schemas the routes check requests against (with
 * their OpenAPI descriptions and examples), from which the use cases' input types are made (`Static<>`).
 */

/** The body of POST /login. */
export const LoginBody = Type.Object(
  {
    name: Name,
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    tenant: Type.Optional(Name),
    returnToken: Type.Optional(Type.Boolean({ default: true })),
    cookie: Type.Optional(Type.Boolean({ description: 'Set the session cookie.' })),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'admin@example.com', password: 'change-me-please' }],
  },
);

/** The query of GET /login. */
export const SessionQuery = Type.Object(
  { returnToken: Type.Optional(Type.Boolean({ default: true })) },
  { additionalProperties: false },
);

/** The body of POST /login/recovery. */
export const RecoveryCodeBody = Type.Object(
  { recoveryCode: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false, examples: [{ recoveryCode: 'k7mq-2xwp-9dzr' }] },
);

/** The body of POST /login/totp. */
export const TotpBody = Type.Object(
  { code: Type.String({ pattern: '^\\s*\\d{6}\\s*$' }) },
  { additionalProperties: false, examples: [{ code: '492817' }] },
);

/** The body of POST /login/mfa: the account's password, asked again. */
export const EnableMfaBody = Type.Object(
  { password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false, examples: [{ password: 'correct horse battery staple' }] },
);

/** The body of POST /api/key (optional). */
export const NewApiKeyBody = Type.Optional(
  Type.Object(
    {
      description: Type.Optional(Type.String({ maxLength: 500 })),
      agent: Type.Optional(
        Type.Boolean({
          description:
            'A key for an AI agent (the MCP server at /mcp): it can never approve an agent action, and outside /mcp it only reads (GET). Its consequential tool calls wait for a person’s approval.',
        }),
      ),
      readOnly: Type.Optional(
        Type.Boolean({
          description:
            'A key that only reads: every write call and every write tool of /mcp is refused (403).',
        }),
      ),
    },
    {
      additionalProperties: false,
      examples: [{ description: 'ERP integration' }, { description: 'Contracts assistant', agent: true }],
    },
  ),
);

/** The path of DELETE /api/key/{token}: the whole key or its public prefix. */
export const ApiKeyParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
