import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { createApiKey, listApiKeys, revokeApiKey } from '../../auth/api-keys.js';
import { logIn } from '../../auth/log-in.js';
import { logOut } from '../../auth/log-out.js';
import { loginResponse } from '../../core/identity/login-response.js';
import { disableMfa, enableMfa, unlockWithRecoveryCode, unlockWithTotp } from '../../auth/mfa.js';
import type { Deps } from '../../core/deps.js';
import { actorOf, queryToken, TOKEN_COOKIE } from '../authentication.js';
import { sessionCookieOptions } from '../cookie-sessions.js';
import { useMinified } from '../minified.js';
import { LoginResponse, Success, withErrors } from '../schemas.js';
import {
  ApiKeyParams,
  EnableMfaBody,
  LoginBody,
  NewApiKeyBody,
  RecoveryCodeBody,
  SessionQuery,
  TotpBody,
} from '../../auth/contract.js';
import { answerSuccess } from '../answers.js';

/** Sessions, MFA and API keys. */
export function authRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    useMinified(app);

    app.post(
      '/login',
      {
        config: { auth: 'none' },
        schema: {
          tags: ['auth'],
          operationId: 'logIn',
          summary: 'Log in with name and password',
          description:
            'Returns a session token (locked when the account has MFA). `cookie: true` also sets an HttpOnly cookie, after which the token query parameter is not needed. `returnToken: false` leaves the token out of the body. Wrong passwords are limited per account (LOGIN_MAX_FAILURES_PER_ACCOUNT) and per client address (LOGIN_MAX_FAILURES_PER_ADDRESS) within LOGIN_WINDOW_SECONDS: each attempt is counted before its password is checked, so parallel attempts count too; past the limit even the right password is 429 RATE_LIMITED with Retry-After.',
          body: LoginBody,
          response: withErrors({ 200: LoginResponse }),
        },
      },
      async (request, reply) => {
        const { token, response } = await logIn(deps, {
          name: request.body.name,
          password: request.body.password,
          tenant: request.body.tenant,
          address: request.ip,
          requestId: request.id,
        });
        if (request.body.cookie) {
          void reply.setCookie(
            TOKEN_COOKIE,
            token,
            sessionCookieOptions(deps.config.publicUrl, deps.config.sessionTtlDays * 86_400),
          );
        }
        if (request.body.returnToken === false) delete response.token;
        return response;
      },
    );

    app.get(
      '/login',
      {
        config: { auth: 'optional' },
        schema: {
          tags: ['auth'],
          operationId: 'getSession',
          summary: 'Describe the current session',
          description:
            'Without a token, or with an unknown or expired one: 200 `{logged:false}`. With a locked token: `logged` true and `isUnlocked` false. A suspended account: 401.',
          querystring: SessionQuery,
          response: withErrors({ 200: LoginResponse }),
        },
      },
      async (request) => {
        const actor = request.actor;
        if (!actor) return { logged: false };
        // The token the caller already holds, as authentication read it from the query.
        const token = request.query.returnToken === false ? undefined : queryToken(request);
        return loginResponse(deps, {
          userId: actor.userId,
          unlocked: actor.unlocked,
          token,
          row: request.actorRow,
        });
      },
    );

    app.get(
      '/logout',
      {
        config: { auth: 'locked' },
        schema: {
          tags: ['auth'],
          operationId: 'logOut',
          summary: 'End this session',
          description:
            'Only the token used ends; the user’s other sessions stay valid. With an API key: 400 (keys are revoked with DELETE /api/key/{key}).',
          response: withErrors({ 200: Success }),
        },
      },
      async (request, reply) => {
        await logOut(deps, actorOf(request));
        void reply.clearCookie(TOKEN_COOKIE, { path: '/' });
        return { status: 'SUCCESS' as const };
      },
    );

    app.post(
      '/login/recovery',
      {
        config: { auth: 'locked' },
        schema: {
          tags: ['auth'],
          operationId: 'unlockSessionWithRecoveryCode',
          summary: 'Unlock a locked session with a recovery code',
          description:
            'Each code works once. Answers how many unused codes remain. On a session that is already unlocked: 400, and the code is not used. 5 wrong codes (recovery and authenticator codes together, counted before the code is checked, so parallel attempts count too) lock the account’s second factor for LOGIN_WINDOW_SECONDS: 429 RATE_LIMITED with Retry-After.',
          body: RecoveryCodeBody,
          response: withErrors({
            200: Type.Object(
              { remainingRecoveryCodes: Type.Integer() },
              { examples: [{ remainingRecoveryCodes: 9 }] },
            ),
          }),
        },
      },
      async (request) =>
        unlockWithRecoveryCode(deps, actorOf(request), { recoveryCode: request.body.recoveryCode }),
    );

    app.post(
      '/login/totp',
      {
        config: { auth: 'locked' },
        schema: {
          tags: ['auth'],
          operationId: 'unlockSessionWithTotp',
          summary: 'Unlock a locked session with an authenticator code',
          description:
            'The code of the current 30-second step, or of the one before or after (clock drift). A step, once accepted, is never accepted again for that user (RFC 6238 §5.2): a code unlocks one session, and of parallel requests with one code exactly one wins; the next code comes with the next step. 5 wrong codes (with recovery codes, counted before the code is checked) then 429 RATE_LIMITED with Retry-After.',
          body: TotpBody,
          response: withErrors({ 200: Success }),
        },
      },
      async (request) => answerSuccess(unlockWithTotp(deps, actorOf(request), { code: request.body.code })),
    );

    app.post(
      '/login/mfa',
      {
        schema: {
          tags: ['auth'],
          operationId: 'enableMfa',
          summary: 'Enable MFA for the caller',
          description:
            'Body `{password}`: the account’s password, asked again so that a session alone (or a page driving it) cannot change how the account signs in; a wrong one is 403 and counts against the login limits (429 past them); an account without a password (it signs in through an identity provider) is 403. Returns the TOTP secret (and an otpauth:// URL for a QR code) and ten single-use recovery codes, shown only this once. Later logins return a locked token.',
          body: EnableMfaBody,
          response: withErrors({
            200: Type.Object(
              {
                recoveryCodes: Type.Array(Type.String(), { minItems: 10, maxItems: 10 }),
                totpSecret: Type.String(),
                otpauthUrl: Type.String(),
              },
              {
                examples: [
                  {
                    recoveryCodes: [
                      'k7mq-2xwp-9dzr',
                      'h3vb-8ncs-4tle',
                      'p9wd-6yfk-1rxa',
                      'z2gh-5mqe-7bun',
                      'c4rt-0jxs-8wkp',
                      'm6ne-3qzd-2hfy',
                      'v1kx-9tbw-5gsc',
                      'y8fp-4dnh-6rqm',
                      'b5sz-7wcl-0xte',
                      'g0uj-1ekv-3pnd',
                    ],
                    totpSecret: 'JBSWY3DPEHPK3PXP',
                    otpauthUrl:
                      'otpauth://totp/Signery:admin%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Signery',
                  },
                ],
              },
            ),
          }),
        },
      },
      async (request) =>
        enableMfa(deps, actorOf(request), { password: request.body.password, address: request.ip }),
    );

    app.delete(
      '/login/mfa',
      {
        schema: {
          tags: ['auth'],
          operationId: 'disableMfa',
          summary: 'Disable MFA for the caller',
          response: withErrors({ 200: Success }),
        },
      },
      async (request) => answerSuccess(disableMfa(deps, actorOf(request))),
    );

    const ApiKeyItem = Type.Object({
      id: Type.String({ description: 'The key’s public prefix (never the secret).' }),
      description: Type.String(),
      created: Type.String(),
      lastUsed: Type.Union([Type.String(), Type.Null()]),
      expires: Type.String(),
      apiKeyType: Type.String(),
      agent: Type.Boolean({ description: 'A key for an AI agent: it never approves agent actions.' }),
      readOnly: Type.Boolean({ description: 'A key that only reads.' }),
    });
    const ApiKeyList = Type.Object(
      { results: Type.Array(ApiKeyItem) },
      {
        examples: [
          {
            results: [
              {
                id: 'sgy_3f9a1c07be42',
                description: 'ERP integration',
                created: '2026-03-01T08:00:00.000Z',
                lastUsed: '2026-03-02T10:15:00.000Z',
                expires: '2036-02-27T08:00:00.000Z',
                apiKeyType: 'generic',
                agent: false,
                readOnly: false,
              },
            ],
          },
        ],
      },
    );

    app.get(
      '/api/key',
      {
        schema: {
          tags: ['auth'],
          operationId: 'listApiKeys',
          summary: 'List the caller’s API keys',
          response: withErrors({ 200: ApiKeyList }),
        },
      },
      async (request) => ({ results: await listApiKeys(deps, actorOf(request)) }),
    );

    app.post(
      '/api/key',
      {
        schema: {
          tags: ['auth'],
          operationId: 'createApiKey',
          summary: 'Create an API key',
          description:
            'The whole key is returned once as `id`; it has its owner’s permissions (`readOnly`: only their reads; `agent`: a key for an AI agent, see /mcp and /agent-actions) and is valid for 10 years. Rotate by creating a new key (the old one may be used to do so) and revoking the old.',
          body: NewApiKeyBody,
          response: withErrors({
            200: Type.Object(
              { id: Type.String({ description: 'The whole key: shown this once.' }) },
              { examples: [{ id: 'sgy_3f9a1c07be42_Qm8vX2kPz3mWq7LrT1nYc5bHs9dJe0aGu6iKoZ4wRyE' }] },
            ),
          }),
        },
      },
      async (request) => ({
        id: await createApiKey(deps, actorOf(request), request.body ?? {}),
      }),
    );

    app.delete(
      '/api/key/:token',
      {
        config: { credentialParam: 'token' },
        schema: {
          tags: ['auth'],
          operationId: 'revokeApiKey',
          summary: 'Revoke an API key',
          description:
            'The path holds the whole key or its public prefix. The whole key in the path is its own credential: no token query parameter is needed.',
          params: ApiKeyParams,
          response: withErrors({ 200: Success }),
        },
      },
      async (request) => answerSuccess(revokeApiKey(deps, actorOf(request), { key: request.params.token })),
    );
  };
}
