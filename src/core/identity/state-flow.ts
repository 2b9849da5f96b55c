import type { Kysely } from 'kysely';
import * as client from 'openid-client';
import type { OidcProviderConfig } from '../../base/config.js';
import type { Deps } from '../deps.js';
import { Unauthenticated, ValidationError } from '../../base/errors.js';
import type { OidcLoginStateTable } from '../../store/db/schema.js';
import { dropCredentials } from './credential-params.js';
import { hashToken, newToken, sameHash } from './secrets.js';
import type { OidcProviders } from './oidc-providers.js';

/**
 * Where each flow through an identity provider keeps its pending states: the users' sign-in, and
 * external recipients proving who they are (whose states also name the share).
 */
export type PendingStateTable = 'oidc_login_states' | 'share_oidc_states';

/** A pending state's columns, which both tables have; the recipients' also has `share_id`. */
export type PendingState = OidcLoginStateTable & { share_id?: string };

/** How long a started flow may take before its callback is refused. */
export const OIDC_LOGIN_TTL_SECONDS = 600;

export const STATE_UNUSABLE = 'This sign-in is unknown, has expired or was already used: start it again';

/** Both tables seen through the columns they share, so that one statement serves both flows. */
function pendingStates(deps: Deps): Kysely<Record<PendingStateTable, PendingState>> {
  return deps.db as unknown as Kysely<Record<PendingStateTable, PendingState>>;
}

export interface StartedAuthorization {
  /** The provider's authorization endpoint with state, nonce and PKCE challenge: send the browser there. */
  authorizationUrl: string;
  /** Goes to the browser as a cookie; the callback must bring it back (see claimPendingState). */
  binding: string;
}

/**
 * Starts an authorization code request with PKCE at `provider` and keeps its secrets in `table`
 * (hashed where they are compared), in the database so that whichever node receives the callback can
 * finish it. The browser goes to `authorizationUrl` with `binding` as a cookie.
 */
export async function beginAuthorization(
  deps: Deps,
  providers: OidcProviders,
  table: PendingStateTable,
  options: {
    provider: string;
    callbackUrl: (providerName: string) => string;
    redirect: string | null;
    shareId?: string;
  },
): Promise<StartedAuthorization> {
  const { provider, client: oidc } = await providers.open(options.provider);
  const request = await authorizationRequest(oidc, provider, options.callbackUrl(provider.name));
  const now = deps.clock.now();
  const db = pendingStates(deps);
  // Starts never finished are swept as new ones come, so a table holds about ten minutes of them.
  await db.deleteFrom(table).where('expires_at', '<=', now.toISOString()).execute();
  await db
    .insertInto(table)
    .values({
      ...pendingStateRow(request, { provider: provider.name, redirect: options.redirect, now }),
      ...(options.shareId === undefined ? {} : { share_id: options.shareId }),
    })
    .execute();
  return { authorizationUrl: request.authorizationUrl, binding: request.binding };
}

/**
 * The pending state a callback names, taken (deleting it is what makes it single use: of two callbacks
 * with one state, one gets the row), or 401 when it is unknown, expired, used, of another provider, or
 * was started in another browser than the one bringing the callback.
 */
export async function claimPendingState(
  deps: Deps,
  table: PendingStateTable,
  options: { provider: string; state: string | null; binding: string | undefined },
): Promise<PendingState & { state: string }> {
  const { state } = options;
  if (!state) throw new Unauthenticated(STATE_UNUSABLE);
  const pending = await pendingStates(deps)
    .deleteFrom(table)
    .where('state_hash', '=', hashToken(state))
    .returningAll()
    .executeTakeFirst();
  if (!pending || pending.provider !== options.provider || new Date(pending.expires_at) <= deps.clock.now()) {
    throw new Unauthenticated(STATE_UNUSABLE);
  }
  // Without this, someone could start a flow, sign in at the provider as themselves and get another
  // person's browser to finish it: that person would then work, unknowingly, in the other's account,
  // or prove their identity on a share link in the other's hands.
  if (!options.binding || !sameHash(hashToken(options.binding), pending.binding_hash)) {
    throw new Unauthenticated('This sign-in was started in another browser: start it again here');
  }
  const redirect = pending.redirect === null ? null : landingOf(deps.config.publicUrl, pending.redirect);
  return { ...pending, redirect, state };
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
 * Where a browser may be sent once a flow through an identity provider is done, with the token it
 * opened in the fragment: a page on PUBLIC_URL's origin, `target` without its fragment, user name and
 * password, and without any credential parameter whatever its spelling (credential-params.ts).
 * Anything else would hand the session to whoever crafted the start link: another origin (an open
 * redirect carrying a token), or an answer of the API, which may be a recipient's upload opened with
 * their link in the query (DESIGN, issue 37: "No credential ever travels in a URL that leaves the
 * API"). Refused: 400 naming why.
 */
export function ownRedirect(publicUrl: string, target: string): string {
  const place = landingPlace(publicUrl, target);
  if ('refused' in place) throw new ValidationError('redirect', place.refused, { part: 'querystring' });
  return place.url;
}

/**
 * The target a started flow kept, checked again when it finishes (a start made before the rules above
 * could keep any target): PUBLIC_URL's home page instead of one the rules refuse.
 */
export function landingOf(publicUrl: string, target: string): string {
  const place = landingPlace(publicUrl, target);
  return 'url' in place ? place.url : `${publicUrl}/`;
}

function landingPlace(publicUrl: string, target: string): { url: string } | { refused: string } {
  const home = new URL(publicUrl);
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return { refused: `must be an absolute URL on ${home.origin}` };
  }
  if (url.origin !== home.origin) return { refused: `must be on ${home.origin}` };
  const api = `${canonicalPath(home.pathname).replace(/\/$/, '')}/api`;
  const path = canonicalPath(url.pathname);
  if (path === api || path.startsWith(`${api}/`)) {
    return { refused: `must be a page, not an answer of the API (${api}/…)` };
  }
  dropCredentials(url.searchParams);
  url.username = '';
  url.password = '';
  url.hash = '';
  return { url: url.href };
}

/**
 * A path as a router or a proxy on the way may read it: decoded until it no longer changes (`/%61pi`,
 * `/%2561pi`), backslashes and repeated slashes as one slash, dot segments resolved (`/s/..%2Fapi`),
 * case folded (`/API`).
 */
function canonicalPath(pathname: string): string {
  let path = pathname;
  for (let round = 0; round < 5; round++) {
    let decoded = path;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      // A malformed escape: read as it is.
    }
    const next = new URL(decoded.replace(/[\\/]+/g, '/'), 'http://canonical.invalid').pathname;
    if (next === path) break;
    path = next;
  }
  return path.normalize('NFKC').toLowerCase();
}
