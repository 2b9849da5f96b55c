import * as client from 'openid-client';
import type { OidcProviderConfig } from '../../config.js';
import type { Deps } from '../../deps.js';
import { ValidationError } from '../../errors.js';
import { hashToken, newToken } from '../secrets.js';
import { callbackUrl, type OidcProviders } from './oidc-providers.js';

/** How long a started sign-in may take before its callback is refused. */
export const OIDC_LOGIN_TTL_SECONDS = 600;

export interface StartOidcLoginOptions {
  provider: string;
  /** Where to send the browser once signed in, token in the fragment; must be on PUBLIC_URL's origin. */
  redirect?: string | undefined;
}

export interface StartedOidcLogin {
  /** The provider's authorization endpoint with state, nonce and PKCE challenge: send the browser there. */
  authorizationUrl: string;
  /** Goes to the browser as a cookie; the callback must bring it back (see finishOidcLogin). */
  binding: string;
}

/**
 * GET /login/oidc/:provider (spec: Authentication 5, third-party sign-in): an authorization code
 * request with PKCE. State, nonce and verifier are kept in the database, not in memory, so whichever
 * node receives the callback can finish it.
 */
export async function startOidcLogin(
  deps: Deps,
  providers: OidcProviders,
  options: StartOidcLoginOptions,
): Promise<StartedOidcLogin> {
  const redirect =
    options.redirect === undefined ? null : ownRedirect(deps.config.publicUrl, options.redirect);
  const { provider, client: oidc } = await providers.open(options.provider);
  const request = await authorizationRequest(
    oidc,
    provider,
    callbackUrl(deps.config.publicUrl, provider.name),
  );
  const now = deps.clock.now();
  // Sign-ins never finished are swept as new ones start, so the table holds about ten minutes of starts.
  await deps.db.deleteFrom('oidc_login_states').where('expires_at', '<=', now.toISOString()).execute();
  await deps.db
    .insertInto('oidc_login_states')
    .values(pendingStateRow(request, { provider: provider.name, redirect, now }))
    .execute();
  return { authorizationUrl: request.authorizationUrl, binding: request.binding };
}

/**
 * The columns a pending flow keeps until its callback (users' sign-in and recipients' proof alike): the
 * state and binding hashed, the PKCE verifier and nonce, and the ten minutes it may take.
 */
export function pendingStateRow(
  request: AuthorizationRequest,
  options: { provider: string; redirect: string | null; now: Date },
) {
  return {
    state_hash: hashToken(request.state),
    provider: options.provider,
    code_verifier: request.codeVerifier,
    nonce: request.nonce,
    binding_hash: hashToken(request.binding),
    redirect: options.redirect,
    created_at: options.now.toISOString(),
    expires_at: new Date(options.now.getTime() + OIDC_LOGIN_TTL_SECONDS * 1000).toISOString(),
  };
}

/** One authorization code request: its secrets, to keep until the callback, and the provider's URL. */
export interface AuthorizationRequest {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** Goes to the browser as a cookie; the callback must bring it back. */
  binding: string;
  authorizationUrl: string;
}

/**
 * A fresh authorization code request with PKCE S256, `state` and `nonce` for `redirectUri` (used by
 * the users' sign-in and by external recipients proving who they are, sharing/start-share-oidc.ts).
 * The caller keeps the secrets (hashed where they are compared) for its callback.
 */
export async function authorizationRequest(
  oidc: client.Configuration,
  provider: OidcProviderConfig,
  redirectUri: string,
): Promise<AuthorizationRequest> {
  const state = client.randomState();
  const nonce = client.randomNonce();
  const codeVerifier = client.randomPKCECodeVerifier();
  const authorizationUrl = client.buildAuthorizationUrl(oidc, {
    redirect_uri: redirectUri,
    scope: provider.scopes.join(' '),
    state,
    nonce,
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
  });
  return { state, nonce, codeVerifier, binding: newToken(), authorizationUrl: authorizationUrl.href };
}

/**
 * The token travels in the redirect's fragment, so only our own origin may receive it: anything else
 * would hand sessions to whoever crafted the start link (an open redirect carrying a token).
 */
export function ownRedirect(publicUrl: string, redirect: string): string {
  const origin = new URL(publicUrl).origin;
  let url: URL;
  try {
    url = new URL(redirect);
  } catch {
    throw new ValidationError(`"redirect" must be an absolute URL on ${origin}`);
  }
  if (url.origin !== origin) throw new ValidationError(`"redirect" must be on ${origin}`);
  url.hash = '';
  return url.href;
}
