import type { Deps } from '../../core/deps.js';
import { callbackUrl, type OidcProviders } from '../../core/identity/oidc-providers.js';
import {
  beginAuthorization,
  ownRedirect,
  type StartedAuthorization,
} from '../../core/identity/state-flow.js';

export interface StartOidcLoginOptions {
  provider: string;
  /** Where to send the browser once signed in, token in the fragment; must be on PUBLIC_URL's origin. */
  redirect?: string | undefined;
}

/**
 * GET /login/oidc/:provider (spec: Authentication 5, third-party sign-in): an authorization code
 * request with PKCE (state-flow.ts).
 */
export async function startOidcLogin(
  deps: Deps,
  providers: OidcProviders,
  options: StartOidcLoginOptions,
): Promise<StartedAuthorization> {
  const redirect =
    options.redirect === undefined ? null : ownRedirect(deps.config.publicUrl, options.redirect);
  return beginAuthorization(deps, providers, 'oidc_login_states', {
    provider: options.provider,
    callbackUrl: (name) => callbackUrl(deps.config.publicUrl, name),
    redirect,
  });
}
