import * as client from 'openid-client';
import type { OidcProviderConfig } from '../../base/config.js';
import { Unauthenticated } from '../../base/errors.js';
import { IdentityProviderFailed } from './identity-provider-failed.js';

/**
 * The code grant (checking state, nonce, PKCE and issuer) and, when the ID token lacks any of the
 * `claims` wanted (default: the e-mail claims), the userinfo endpoint. Used by the users' sign-in and
 * by external recipients proving who they are (sharing/finish-share-oidc.ts). A refusal by the
 * provider is Unauthenticated; a provider that cannot be used is IdentityProviderFailed (502).
 */
export async function exchangeCode(
  oidc: client.Configuration,
  provider: OidcProviderConfig,
  options: {
    callback: string;
    query: URLSearchParams;
    state: string;
    nonce: string;
    codeVerifier: string;
    claims?: readonly string[];
  },
): Promise<OidcIdentity> {
  const currentUrl = new URL(options.callback);
  currentUrl.search = options.query.toString();
  try {
    const tokens = await client.authorizationCodeGrant(oidc, currentUrl, {
      pkceCodeVerifier: options.codeVerifier,
      expectedState: options.state,
      expectedNonce: options.nonce,
      idTokenExpected: true,
    });
    const idToken = tokens.claims();
    if (!idToken) throw new Error('no ID token');
    const claims: Record<string, unknown> = { ...idToken };
    const wanted = options.claims ?? ['email', 'email_verified'];
    // Many providers put profile claims only in userinfo when the code flow is used (OIDC Core 5.4).
    if (wanted.some((c) => claims[c] === undefined) && oidc.serverMetadata().userinfo_endpoint) {
      const info = await client.fetchUserInfo(oidc, tokens.access_token, idToken.sub);
      for (const [key, value] of Object.entries(info)) claims[key] ??= value;
    }
    const { email, email_verified: verified } = claims;
    return {
      subject: idToken.sub,
      email: typeof email === 'string' && email !== '' ? email : undefined,
      // Some providers send the boolean as a string.
      emailVerified: verified === true || verified === 'true',
      claims,
    };
  } catch (error) {
    throw providerError(provider, error);
  }
}

function providerError(provider: OidcProviderConfig, error: unknown): Error {
  if (error instanceof client.AuthorizationResponseError) {
    const code = /^[\w.-]{1,64}$/.test(error.error) ? error.error : 'error';
    return new Unauthenticated(`The identity provider did not sign you in (${code})`);
  }
  if (error instanceof client.ResponseBodyError && error.error === 'invalid_grant') {
    return new Unauthenticated(
      'The identity provider did not accept the sign-in: it has expired or was already used; start it again',
    );
  }
  return new IdentityProviderFailed(
    `The identity provider ${provider.name} gave an answer that cannot be used`,
    {
      cause: error,
    },
  );
}

/** Who the provider says signed in: its `sub` and the e-mail claims (from the ID token or userinfo). */
export interface OidcIdentity {
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
  /** Every claim of the ID token, completed from userinfo when a wanted one was missing. */
  claims: Record<string, unknown>;
}
