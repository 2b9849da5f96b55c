import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { finishOidcLogin } from '../../auth/oidc/finish-oidc-login.js';
import { OIDC_LOGIN_PATH, OidcProviders } from '../../core/identity/oidc-providers.js';
import { startOidcLogin } from '../../auth/oidc/start-oidc-login.js';
import { OIDC_LOGIN_TTL_SECONDS } from '../../core/identity/state-flow.js';
import type { Deps } from '../../core/deps.js';
import { BindingCookie, logProviderFailures, registerBrowserFlow } from '../oidc-browser-flow.js';
import { LoginResponse, withErrors } from '../schemas.js';

/**
 * Third-party sign-in through the operator's OpenID Connect providers: authorization code with PKCE,
 * linking to existing accounts by verified e-mail.
 */
export function oidcRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  const providers = new OidcProviders(deps.config.oidcProviders);
  return async (app) => {
    // Ties a callback to the browser that started the sign-in (see finishOidcLogin).
    const binding = new BindingCookie('signery_oidc', OIDC_LOGIN_PATH, deps.config.publicUrl);
    logProviderFailures(app);

    app.get(
      '/login/oidc',
      {
        config: { auth: 'none' },
        schema: {
          tags: ['auth'],
          operationId: 'listIdentityProviders',
          summary: 'List the identity providers users may sign in with',
          description:
            'The OpenID Connect providers the operator configured (environment variable `OIDC_PROVIDERS`). Start a sign-in with GET /login/oidc/{name}. An empty list when none is configured.',
          response: withErrors({
            200: Type.Object(
              { providers: Type.Array(Type.Object({ name: Type.String(), label: Type.String() })) },
              { examples: [{ providers: [{ name: 'entra', label: 'Sign in with Microsoft' }] }] },
            ),
          }),
        },
      },
      async () => ({ providers: providers.list() }),
    );

    registerBrowserFlow(app, {
      path: '/login/oidc',
      binding,
      tags: ['auth'],
      start: {
        auth: 'none',
        operationId: 'startIdentityProviderLogin',
        summary: 'Start a sign-in with an identity provider',
        description: [
          'Open this in the user’s browser (a link or a navigation, not a background request). It answers 302 to the provider’s authorization endpoint (authorization code flow with PKCE S256, `state` and `nonce`) and sets a short-lived HttpOnly cookie that ties the sign-in to this browser.',
          `The provider sends the browser back to \`PUBLIC_URL${OIDC_LOGIN_PATH}/{name}/callback\`, which the operator registers as the client's redirect URI. The sign-in must finish within ${OIDC_LOGIN_TTL_SECONDS / 60} minutes, on any node.`,
          '`redirect` (optional): an absolute URL of a page on PUBLIC_URL’s origin where the browser is sent once signed in, with `#token=…&isUnlocked=…` in the fragment. Another origin, or an address of the API (`PUBLIC_URL/api/…`, however its path is spelled or encoded: an API answer is never a place to land a person), is 400 VALIDATION_ERROR. A credential parameter in its query (`token`, `access_token`, in any letter case or percent-encoding) is dropped: no credential travels in a redirect. Unknown provider: 404. Provider unreachable: 502 IDENTITY_PROVIDER_ERROR.',
        ].join('\n\n'),
        begin: (_request, choice) => startOidcLogin(deps, providers, choice),
      },
      callback: {
        operationId: 'finishIdentityProviderLogin',
        summary: 'Finish a sign-in with an identity provider',
        description: [
          'The provider sends the browser here; nobody calls it directly. It checks `state` (single use, 10 minutes, same browser), exchanges the code (PKCE, nonce and issuer checked) and finds the account:',
          '1. the account this provider account (its `sub`) signed in to before; otherwise',
          '2. the one account of the provider’s tenant whose e-mail is the one the provider gives, only when the provider marks it verified (`email_verified` true). No account is created.',
          'It answers the Login response, as POST /login does: `isUnlocked` false for an account with MFA (unlock with POST /login/totp or /login/recovery). When the start was given `redirect`, it answers 302 there instead with `#token=…&isUnlocked=…`. Errors are always JSON.',
          'Refusals (unknown, expired, reused or foreign state, another browser, e-mail not verified or matching no account or several, suspended account, the provider refusing) are 401 UNAUTHENTICATED and count as failed logins of the client address, as on POST /login; too many are 429. Unknown provider: 404. Provider unreachable or answering wrongly: 502 IDENTITY_PROVIDER_ERROR. Each sign-in is audited (`logged`, `data.method` `oidc`).',
        ].join('\n\n'),
        answer: LoginResponse,
        finish: async (request, callback) => {
          const finished = await finishOidcLogin(deps, providers, {
            ...callback,
            address: request.ip,
            requestId: request.id,
          });
          return {
            redirect: finished.redirect,
            fragment: { token: finished.token, isUnlocked: String(finished.response.isUnlocked) },
            answer: finished.response,
          };
        },
      },
    });
  };
}
