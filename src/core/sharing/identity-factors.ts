import type { OidcProviderConfig } from '../../base/config.js';
import type { OAuthFactor } from './share-types.js';

/**
 * How an external recipient's identity, as an OpenID provider asserts it, is held against the share's
 * `oauthFactors` (spec Sharing rule 3: "All given factors are checked"; Authentication 6):
 * - `email`: the `email` claim, equal ignoring case, and only when `email_verified` is true (an
 *   unverified address is anyone's to claim);
 * - `phoneNumber`: the `phone_number` claim (or the provider's `claims.phoneNumber`), equal in its
 *   digits (spaces, dashes, brackets, a leading `+` or `00` ignored); refused when the provider says
 *   `phone_number_verified` false;
 * - `emiratesId`: the claim the provider's `claims.emiratesId` names (e.g. `idn`), equal in its
 *   letters and digits; a provider configured without it cannot prove an Emirates ID.
 */

/** A factor the provider's claims did not prove, by type only: values are never repeated in messages. */
export interface FactorMismatch {
  type: OAuthFactor['type'];
  reason: string;
}

/** The providers of a share's `allowedOAuths` that the operator configured, matched ignoring case. */
export function offeredProviders(
  allowedOAuths: readonly string[],
  configured: readonly OidcProviderConfig[],
): OidcProviderConfig[] {
  const wanted = new Set(allowedOAuths.map((name) => name.toLowerCase()));
  return configured.filter((p) => wanted.has(p.name.toLowerCase()));
}

/** The claim names a provider must give for these factors (asked from userinfo when not in the ID token). */
export function claimsFor(factors: readonly OAuthFactor[], provider: OidcProviderConfig): string[] {
  const names = new Set<string>();
  for (const factor of factors) {
    if (factor.type === 'email') names.add('email').add('email_verified');
    else if (factor.type === 'phoneNumber') names.add(provider.claims.phoneNumber ?? 'phone_number');
    else if (provider.claims.emiratesId) names.add(provider.claims.emiratesId);
  }
  return [...names];
}

/** Every factor the claims do not prove; an empty list when all of them match. */
export function mismatchedFactors(
  factors: readonly OAuthFactor[],
  claims: Record<string, unknown>,
  provider: OidcProviderConfig,
): FactorMismatch[] {
  const mismatches: FactorMismatch[] = [];
  for (const factor of factors) {
    const reason = check(factor, claims, provider);
    if (reason) mismatches.push({ type: factor.type, reason });
  }
  return mismatches;
}

function check(
  factor: OAuthFactor,
  claims: Record<string, unknown>,
  provider: OidcProviderConfig,
): string | undefined {
  if (factor.type === 'email') {
    const email = text(claims.email);
    if (!email) return 'the provider gave no e-mail address';
    if (!(claims.email_verified === true || claims.email_verified === 'true')) {
      return 'the provider has not verified the e-mail address';
    }
    return email.trim().toLowerCase() === factor.value.trim().toLowerCase()
      ? undefined
      : 'the e-mail address is not the one the document was sent to';
  }
  if (factor.type === 'phoneNumber') {
    const claim = provider.claims.phoneNumber ?? 'phone_number';
    const phone = text(claims[claim]);
    if (!phone) return 'the provider gave no phone number';
    if (claims.phone_number_verified === false || claims.phone_number_verified === 'false') {
      return 'the provider has not verified the phone number';
    }
    return phoneDigits(phone) === phoneDigits(factor.value)
      ? undefined
      : 'the phone number is not the one the sharer gave';
  }
  const claim = provider.claims.emiratesId;
  if (!claim)
    return `the provider ${provider.name} is not configured to give an Emirates ID (claims.emiratesId)`;
  const id = text(claims[claim]);
  if (!id) return 'the provider gave no Emirates ID';
  return alphanumeric(id) === alphanumeric(factor.value)
    ? undefined
    : 'the Emirates ID is not the one the sharer gave';
}

function text(value: unknown): string | undefined {
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function phoneDigits(phone: string): string {
  return phone.replace(/\D/g, '').replace(/^00/, '');
}

function alphanumeric(value: string): string {
  return value.replace(/[^0-9A-Za-z]/g, '').toUpperCase();
}
