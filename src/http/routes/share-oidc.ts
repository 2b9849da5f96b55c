import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { OidcProviders } from '../../core/identity/oidc-providers.js';
import type { Deps } from '../../core/deps.js';
import { Unauthenticated } from '../../base/errors.js';
import { finishShareOidc } from '../../sharing/finish-share-oidc.js';
import { listShareProviders } from '../../sharing/list-share-providers.js';
import { OIDC_LOGIN_TTL_SECONDS } from '../../core/identity/state-flow.js';
import { SHARE_OIDC_PATH, startShareOidc } from '../../sharing/start-share-oidc.js';
import { BindingCookie, logProviderFailures, registerBrowserFlow } from '../oidc-browser-flow.js';
import { EXAMPLE_IDS } from '../../core/examples.js';
import { withErrors } from '../schemas.js';

const FACTORS =
  'The provider’s claims are held against the share’s `oauthFactors` (default: the recipient’s `email`), and all of them must match: `email` ↔ the `email` claim with `email_verified` true (case ignored); `phoneNumber` ↔ `phone_number` (or the claim the provider entry’s `claims.phoneNumber` names; digits compared, refused when `phone_number_verified` is false); `emiratesId` ↔ the claim the provider entry’s `claims.emiratesId` names, e.g. `OIDC_PROVIDERS=[{"name":"uaepass", …, "scopes":["openid","email","phone","idn"], "claims":{"emiratesId":"idn"}}]` (letters and digits compared; a provider without it cannot prove an Emirates ID). The provider must be given the scopes that release these claims.';

/**
 * External recipients proving who they are through the identity providers their share allows, with
 * the operator's OIDC_PROVIDERS and the users' sign-in pieces.
 */
export function shareOidcRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  const providers = new OidcProviders(deps.config.oidcProviders);
  return async (app) => {
    // Ties a callback to the browser that started the recipient's sign-in.
    const binding = new BindingCookie('signery_share_oidc', SHARE_OIDC_PATH, deps.config.publicUrl);
    logProviderFailures(app);

    app.get(
      '/share/oidc',
      {
        config: { auth: 'recipient-locked', signedCopies: true },
        schema: {
          tags: ['sharing'],
          operationId: 'listShareIdentityProviders',
          summary: 'The identity providers a share offers (external recipients)',
          description:
            'With the share-link token (or a recipient session), locked or not: the identity providers of the share’s `allowedOAuths` that the operator configured (OIDC_PROVIDERS, names matched ignoring case; `uaePass` is the provider named `uaepass`), each with the address that starts a sign-in (add `token`), `identityVerified` once one of them proved the recipient in the session sent, and `isUnlocked`: whether the token sent may act (the link of a protected share never does; a recipient session once all protections were passed in it), and `unlockWith`: the password and one-time code the share also asks for (POST /share/unlock), so that a page asks for exactly those. `documentTitle` and `sharedBy` (the sender’s display name, else login name) say what the invitation said already, so a locked page can name the document and its sender before it is unlocked.',
          response: withErrors({
            200: Type.Object(
              {
                providers: Type.Array(
                  Type.Object({ name: Type.String(), label: Type.String(), start: Type.String() }),
                ),
                identityVerified: Type.Optional(Type.Object({ provider: Type.String(), at: Type.String() })),
                isUnlocked: Type.Boolean(),
                unlockWith: Type.Object({
                  password: Type.Boolean({ description: 'The share has a password.' }),
                  code: Type.Union([Type.Literal('sms'), Type.Literal('email'), Type.Null()], {
                    description:
                      'The share has a one-time code, sent by POST /share/otp by SMS or e-mail; null: none.',
                  }),
                }),
                documentTitle: Type.String({
                  description: 'The document’s title, as the invitation gave it.',
                }),
                sharedBy: Type.String({
                  description: 'Who shared it: their display name, else their login name.',
                }),
              },
              {
                examples: [
                  {
                    providers: [
                      {
                        name: 'uaepass',
                        label: 'UAE PASS',
                        start: 'https://sign.example.com/api/v1/share/oidc/uaepass',
                      },
                    ],
                    isUnlocked: false,
                    unlockWith: { password: true, code: null },
                    documentTitle: 'Service agreement 2026',
                    sharedBy: 'Olivia Owner',
                  },
                ],
              },
            ),
          }),
        },
      },
      async (request) => {
        if (!request.recipient) throw new Unauthenticated('Send the share-link token');
        return listShareProviders(deps, request.recipient);
      },
    );

    registerBrowserFlow(app, {
      path: '/share/oidc',
      binding,
      tags: ['sharing'],
      start: {
        auth: 'recipient-locked',
        operationId: 'startShareIdentityProviderProof',
        summary: 'Prove who you are with an identity provider (external recipients)',
        description: [
          'Open this in the recipient’s browser with the share-link `token` (a link or a navigation, not a background request). It answers 302 to the provider’s authorization endpoint (authorization code flow with PKCE S256, `state` and `nonce`) and sets a short-lived HttpOnly cookie that ties the sign-in to this browser.',
          `The provider sends the browser back to \`PUBLIC_URL${SHARE_OIDC_PATH}/{name}/callback\`, which the operator registers as a redirect URI of the client (besides the users’ sign-in one). The sign-in must finish within ${OIDC_LOGIN_TTL_SECONDS / 60} minutes, on any node.`,
          FACTORS,
          '`redirect` (optional): an absolute URL of a page on PUBLIC_URL’s origin (the signer page, e.g. `PUBLIC_URL/s/<token>`) where the browser is sent once the identity is proven. Another origin, or an address of the API (`PUBLIC_URL/api/…`, however its path is spelled or encoded), is 400 VALIDATION_ERROR. A credential parameter in its query (`token`, `access_token`, in any letter case or percent-encoding) is dropped. A provider the share does not allow: 403 FORBIDDEN; unknown provider: 404; a share no longer pending: 409; too many failed unlock attempts: 429; provider unreachable: 502 IDENTITY_PROVIDER_ERROR.',
        ].join('\n\n'),
        errors: { 409: Type.Ref('ErrorBody') },
        begin: async (request, choice) => {
          if (!request.recipient) throw new Unauthenticated('Send the share-link token');
          return startShareOidc(deps, providers, { recipient: request.recipient, ...choice });
        },
      },
      callback: {
        operationId: 'finishShareIdentityProviderProof',
        summary: 'Finish proving who you are with an identity provider',
        description: [
          'The provider sends the browser here; nobody calls it directly. It checks `state` (single use, 10 minutes, same browser) and exchanges the code (PKCE, nonce and issuer checked).',
          FACTORS,
          'All proven: the identity is recorded on the share (Share `identityVerified`, audit `shareIdentityVerified`) and, as POST /share/unlock does, a recipient session is opened (the link itself stays locked): it answers `{status:"SUCCESS", isUnlocked, token}`, or 302 to the start’s `redirect` with `#isUnlocked=…&token=…` (in the fragment, which the browser never sends on). `token` is the recipient session (valid RECIPIENT_SESSION_MINUTES, default 60, after its last use). When the share also has a password or a code, `isUnlocked` is false and POST /share/unlock, called with that session `token`, takes them and answers the session that acts.',
          'A factor not proven is 403 FORBIDDEN naming which (never the expected value; audit `shareIdentityRefused`); the provider refusing the sign-in is 401 UNAUTHENTICATED. Both count as failed unlock attempts of the share, with the password and code ones: 5 within the window, then 429 RATE_LIMITED. Unknown, expired, reused or foreign state, or another browser: 401. Unknown provider: 404. Provider unreachable or answering wrongly: 502 IDENTITY_PROVIDER_ERROR. Errors are always JSON.',
        ].join('\n\n'),
        answer: Type.Object(
          {
            status: Type.Literal('SUCCESS'),
            isUnlocked: Type.Boolean(),
            token: Type.String({ description: 'The recipient session this sign-in opened.' }),
          },
          { examples: [{ status: 'SUCCESS', isUnlocked: true, token: EXAMPLE_IDS.recipientSession }] },
        ),
        finish: async (request, callback) => {
          const finished = await finishShareOidc(deps, providers, { ...callback, requestId: request.id });
          return {
            redirect: finished.redirect,
            fragment: { isUnlocked: String(finished.isUnlocked), token: finished.token },
            answer: { status: 'SUCCESS' as const, isUnlocked: finished.isUnlocked, token: finished.token },
          };
        },
      },
    });
  };
}
