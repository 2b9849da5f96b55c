import type { OidcProviderConfig } from '../../base/config.js';
import type { Deps } from '../../core/deps.js';
import { Unauthenticated } from '../../base/errors.js';
import { openSession } from '../../core/identity/create-session.js';
import { addressKey, checkGuess } from '../../core/identity/login-throttle.js';
import { loginResponse, type LoginResponse } from '../../core/identity/login-response.js';
import { findOidcAccount } from './find-oidc-account.js';
import { callbackUrl, type OidcProviders } from '../../core/identity/oidc-providers.js';
import { claimPendingState } from '../../core/identity/state-flow.js';
import { writeTransaction } from '../../store/db/dialect.js';
import { exchangeCode } from '../../core/identity/oidc-exchange.js';

export interface FinishOidcLoginOptions {
  provider: string;
  /** The callback's query string as the provider sent it (`code`, `state`, `iss`, or `error`). */
  query: URLSearchParams;
  /** The cookie set by the start, when the browser brought it back. */
  binding: string | undefined;
  /** The client's address, for per-address throttling as on POST /login. */
  address: string;
  requestId: string;
}

export interface FinishedOidcLogin {
  token: string;
  response: LoginResponse;
  /** Where the start asked the browser to be sent, if anywhere (already checked to be ours). */
  redirect: string | null;
}

/**
 * GET /login/oidc/:provider/callback (spec: Authentication 5): exchanges the code for the provider's
 * ID token (checking state, nonce, PKCE and issuer), finds the account (see findOidcAccount) and
 * opens a session exactly as POST /login does: locked when the account has MFA (spec: Authentication 3).
 */
export async function finishOidcLogin(
  deps: Deps,
  providers: OidcProviders,
  options: FinishOidcLoginOptions,
): Promise<FinishedOidcLogin> {
  const provider = providers.get(options.provider);
  const keys = [addressKey(deps, options.address)];
  // A refused sign-in counts like a wrong password, reserved before the provider's answer is looked
  // at; a provider that cannot be used is nobody's attempt, and a sign-in that succeeds gives it back.
  return checkGuess(deps, keys, () => finish(deps, providers, provider, options), { clear: () => [] });
}

async function finish(
  deps: Deps,
  providers: OidcProviders,
  provider: OidcProviderConfig,
  options: FinishOidcLoginOptions,
): Promise<FinishedOidcLogin> {
  const pending = await claimPendingState(deps, 'oidc_login_states', {
    provider: provider.name,
    state: options.query.get('state'),
    binding: options.binding,
  });
  const now = deps.clock.now();

  const { client: oidc } = await providers.open(provider.name);
  const identity = await exchangeCode(oidc, provider, {
    callback: callbackUrl(deps.config.publicUrl, provider.name),
    query: options.query,
    state: pending.state,
    nonce: pending.nonce,
    codeVerifier: pending.code_verifier,
  });
  const account = await findOidcAccount(deps, { provider, identity });
  if (account.status !== 'active') throw new Unauthenticated('This account is suspended');

  const unlocked = account.mfa_enabled === 0;
  const at = now.toISOString();
  const { token } = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const session = await openSession(trx, deps, account, {
      activityType: 'logged',
      data: { method: 'oidc', provider: provider.name, unlocked },
      requestId: options.requestId,
      now,
    });
    await trx
      .insertInto('oidc_identities')
      .values({
        provider: provider.name,
        subject: identity.subject,
        tenant_id: account.tenant_id,
        user_id: account.id,
        email: identity.email?.trim().toLowerCase() ?? '',
        created_at: at,
        last_login_at: at,
      })
      .onConflict((oc) =>
        oc.columns(['provider', 'subject']).doUpdateSet(
          // A link still in use only records the sign-in; a stale one is moved to the account found now.
          account.linked
            ? { last_login_at: at }
            : {
                tenant_id: account.tenant_id,
                user_id: account.id,
                email: identity.email?.trim().toLowerCase() ?? '',
                created_at: at,
                last_login_at: at,
              },
        ),
      )
      .execute();
    return session;
  });
  return {
    token,
    redirect: pending.redirect,
    response: await loginResponse(deps, { userId: account.id, unlocked, token }),
  };
}
