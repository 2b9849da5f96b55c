import { assertNotThrottled } from '../core/identity/login-throttle.js';
import type { OidcProviders } from '../core/identity/oidc-providers.js';
import { beginAuthorization, ownRedirect, type StartedAuthorization } from '../core/identity/state-flow.js';
import type { Deps } from '../core/deps.js';
import { Conflict, Forbidden } from '../base/errors.js';
import { offeredProviders } from '../core/sharing/identity-factors.js';
import { shareThrottleKey } from './protect-share.js';
import type { Recipient } from '../core/access/recipient-caller.js';
import { PENDING, shareOptions } from '../core/sharing/share-types.js';

/** The path of the recipients' identity-provider endpoints (also the scope of their binding cookie). */
export const SHARE_OIDC_PATH = '/api/v1/share/oidc';

/** Where the provider sends a recipient back: fixed per provider and registered with it by the operator. */
export function shareCallbackUrl(publicUrl: string, providerName: string): string {
  return `${publicUrl}${SHARE_OIDC_PATH}/${encodeURIComponent(providerName)}/callback`;
}

/**
 * GET /share/oidc/:provider (spec: Authentication 6, Sharing rule 3): an external recipient starts
 * proving who they are at one of the identity providers their share allows, as users sign in
 * (authorization code with PKCE, state in the database so any node finishes it). The share must still
 * owe its action, allow that provider, and not be locked out by failed attempts (429).
 */
export async function startShareOidc(
  deps: Deps,
  providers: OidcProviders,
  options: { recipient: Recipient; provider: string; redirect?: string | undefined },
): Promise<StartedAuthorization> {
  const redirect =
    options.redirect === undefined ? null : ownRedirect(deps.config.publicUrl, options.redirect);
  const share = await deps.db
    .selectFrom('shares')
    .selectAll()
    .where('id', '=', options.recipient.shareId)
    .executeTakeFirstOrThrow();
  const config = providers.get(options.provider);
  const offered = offeredProviders(shareOptions(share).allowedOAuths, deps.config.oidcProviders);
  if (!offered.some((p) => p.name === config.name)) {
    throw new Forbidden(
      offered.length
        ? `This share does not allow the identity provider ${config.name}: use ${offered.map((p) => p.name).join(' or ')}`
        : 'This share allows no identity provider',
    );
  }
  if (!PENDING.includes(share.status)) throw new Conflict(`This share is ${share.status}`);
  await assertNotThrottled(deps, [shareThrottleKey(share.id)]);

  return beginAuthorization(deps, providers, 'share_oidc_states', {
    provider: config.name,
    callbackUrl: (name) => shareCallbackUrl(deps.config.publicUrl, name),
    redirect,
    shareId: share.id,
  });
}
