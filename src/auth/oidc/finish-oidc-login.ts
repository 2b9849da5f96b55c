import * as client from 'openid-client';
import { record } from '../../audit/record.js';
import type { OidcProviderConfig } from '../../config.js';
import type { Deps } from '../../deps.js';
import { Unauthenticated } from '../../errors.js';
import { readProperties } from '../../settings/properties.js';
import { createSession } from '../create-session.js';
import { assertNotThrottled, countFailure, type ThrottleKey } from '../login-throttle.js';
import { loginResponse, type LoginResponse } from '../login-response.js';
import { findOidcAccount, type OidcIdentity } from './find-oidc-account.js';
import { IdentityProviderFailed } from './identity-provider-failed.js';
import { callbackUrl, type OidcProviders } from './oidc-providers.js';
import { claimPendingState } from './state-flow.js';
import { writeTransaction } from '../../store/db/dialect.js';

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
  const keys: ThrottleKey[] = [
    { key: `address:${options.address}`, max: deps.config.loginMaxFailuresPerAddress },
  ];
  await assertNotThrottled(deps, keys);
  try {
    return await finish(deps, providers, provider, options);
  } catch (error) {
    // A refused sign-in counts like a wrong password; a provider that cannot be used is nobody's attempt.
    if (error instanceof Unauthenticated) await countFailure(deps, keys);
    throw error;
  }
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
  const ttlDays = readProperties(account.properties, deps.config.sessionTtlDays).sessionTtlDays;
  const at = now.toISOString();
  const { token } = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const session = await createSession(trx, {
      userId: account.id,
      tenantId: account.tenant_id,
      unlocked,
      now,
      ttlDays,
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
    await record(trx, {
      tenantId: account.tenant_id,
      actorId: account.name,
      activityType: 'logged',
      objectType: 'user',
      objectId: account.id,
      requestId: options.requestId,
      data: { method: 'oidc', provider: provider.name, unlocked },
      at: now,
    });
    return session;
  });
  return {
    token,
    redirect: pending.redirect,
    response: await loginResponse(deps, { userId: account.id, unlocked, token }),
  };
}

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
