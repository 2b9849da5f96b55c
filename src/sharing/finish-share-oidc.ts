import { record } from '../core/audit/record.js';
import { checkGuess } from '../core/identity/login-throttle.js';
import { exchangeCode } from '../core/identity/oidc-exchange.js';
import type { OidcProviders } from '../core/identity/oidc-providers.js';
import { claimPendingState, STATE_UNUSABLE } from '../core/identity/state-flow.js';
import type { Deps } from '../core/deps.js';
import { Forbidden, Unauthenticated } from '../base/errors.js';
import { claimsFor, mismatchedFactors, offeredProviders } from '../core/sharing/identity-factors.js';
import { shareThrottleKey } from './protect-share.js';
import { needsCode } from '../core/sharing/share-protection.js';
import { openRecipientSession } from '../core/sharing/recipient-session.js';
import { shareOptions, type OAuthFactor, type ShareRow } from '../core/sharing/share-types.js';
import { shareCallbackUrl } from './start-share-oidc.js';
import { writeTransaction } from '../store/db/dialect.js';

export interface FinishShareOidcOptions {
  provider: string;
  /** The callback's query string as the provider sent it (`code`, `state`, `iss`, or `error`). */
  query: URLSearchParams;
  /** The cookie set by the start, when the browser brought it back. */
  binding: string | undefined;
  requestId: string;
}

export interface FinishedShareOidc {
  /** Whether the session may act; false while the share's password or code is still owed. */
  isUnlocked: boolean;
  /**
   * The recipient session this sign-in opened (the link itself stays locked): it acts when
   * `isUnlocked`, else it is what POST /share/unlock takes with the password or code.
   */
  token: string;
  /** Where the start asked the browser to be sent, if anywhere (already checked to be ours). */
  redirect: string | null;
}

/**
 * GET /share/oidc/:provider/callback (spec: Authentication 6, Sharing rule 3 "All given factors are
 * checked"): exchanges the code (state, nonce, PKCE and issuer checked, as for users), then holds the
 * provider's claims against the share's `oauthFactors` (identity-factors.ts). All of them proven: the
 * identity is recorded on the share (for the sharer to see) and a recipient session opened, as
 * POST /share/unlock does: unlocked, or, when the share also has a password or code, holding the
 * identity until POST /share/unlock takes them in that session. The link stays locked. A factor not
 * proven is 403 and, like the provider refusing the sign-in (401), counts as a failed unlock attempt
 * of the share (5 per window, then 429).
 */
export async function finishShareOidc(
  deps: Deps,
  providers: OidcProviders,
  options: FinishShareOidcOptions,
): Promise<FinishedShareOidc> {
  const provider = providers.get(options.provider);
  const pending = await claimPendingState(deps, 'share_oidc_states', {
    provider: provider.name,
    state: options.query.get('state'),
    binding: options.binding,
  });
  const now = deps.clock.now();
  const share = await deps.db
    .selectFrom('shares')
    .selectAll()
    .where('id', '=', pending.share_id ?? '')
    .executeTakeFirst();
  if (!share) throw new Unauthenticated(STATE_UNUSABLE);
  const key = shareThrottleKey(share.id);
  // Every protection set must be passed: the identity is one; a password or a code (SMS or e-mail)
  // the share also has still follows, in the session this sign-in opens.
  const isUnlocked = !share.password_hash && !needsCode(share);
  const audit = {
    tenantId: share.tenant_id,
    actorId: share.share_to,
    objectType: 'document',
    objectId: share.document_id,
    requestId: options.requestId,
    at: now,
  };
  // The attempt is reserved before the provider's answer is looked at. The provider refusing, or an
  // identity that does not match, is a failed attempt; a provider that cannot be used is nobody's (502).
  let mismatched = false;
  const { factors, identity } = await checkGuess(
    deps,
    [key],
    async () => {
      const shareSettings = shareOptions(share);
      // The sharer may have changed the providers since the start (PUT /share).
      const offered = offeredProviders(shareSettings.allowedOAuths, deps.config.oidcProviders);
      if (!offered.some((p) => p.name === provider.name)) {
        throw new Forbidden(`This share no longer allows the identity provider ${provider.name}`);
      }
      const factors = requiredFactors(share, shareSettings.oauthFactors);
      if (factors.length === 0)
        throw new Forbidden('This share has no factor an identity provider could prove');

      const { client } = await providers.open(provider.name);
      const identity = await exchangeCode(client, provider, {
        callback: shareCallbackUrl(deps.config.publicUrl, provider.name),
        query: options.query,
        state: pending.state,
        nonce: pending.nonce,
        codeVerifier: pending.code_verifier,
        claims: claimsFor(factors, provider),
      });
      const mismatches = mismatchedFactors(factors, identity.claims, provider);
      if (mismatches.length > 0) {
        mismatched = true;
        await writeTransaction(deps.db, deps.dialect, (trx) =>
          record(trx, {
            ...audit,
            activityType: 'shareIdentityRefused',
            data: {
              shareId: share.id,
              provider: provider.name,
              subject: identity.subject,
              factors: mismatches.map((m) => m.type),
            },
          }),
        );
        throw new Forbidden(
          `The identity given by ${provider.label} does not match this share: ${mismatches.map((m) => m.reason).join('; ')}`,
        );
      }
      return { factors, identity };
    },
    {
      clear: () => (isUnlocked ? [key.key] : []),
      isWrong: (error) => error instanceof Unauthenticated || mismatched,
    },
  );

  const token = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await trx
      .updateTable('shares')
      .set({
        identity_provider: provider.name,
        identity_verified_at: now.toISOString(),
        updated_at: now.toISOString(),
      })
      .where('id', '=', share.id)
      .execute();
    await record(trx, {
      ...audit,
      activityType: 'shareIdentityVerified',
      data: {
        shareId: share.id,
        provider: provider.name,
        subject: identity.subject,
        factors: factors.map((f) => f.type),
        unlocked: isUnlocked,
      },
    });
    return openRecipientSession(trx, {
      share,
      unlocked: isUnlocked,
      identity: { provider: provider.name, at: now.toISOString() },
      now,
      minutes: deps.config.recipientSessionMinutes,
    });
  });
  return { isUnlocked, token, redirect: pending.redirect };
}

/** The factors to prove: the share's, or its recipient's e-mail when it has none (rule 3's default). */
function requiredFactors(share: ShareRow, factors: OAuthFactor[]): OAuthFactor[] {
  if (factors.length > 0) return factors;
  return share.email ? [{ type: 'email', value: share.email }] : [];
}
