import type { OidcProviderConfig } from '../../base/config.js';
import type { Deps } from '../../core/deps.js';
import { Unauthenticated } from '../../base/errors.js';
import { signInAccounts, type SignInAccount } from '../../core/identity/create-session.js';
import { type OidcIdentity } from '../../core/identity/oidc-exchange.js';

/** The account a provider identity signs in to, with what a session needs. */
export interface OidcAccount extends SignInAccount {
  /** Whether it was found through an identity linked before (rather than by e-mail now). */
  linked: boolean;
}

/**
 * Finds the account a provider identity signs in to, in the provider's tenant (ADMIN_TENANT's when
 * it names none, as POST /login does):
 * 1. the account this provider account (`provider`, `sub`) was linked to at an earlier sign-in;
 * 2. otherwise the one account whose e-mail is the identity's, and only when the provider says it has
 *    verified that address: an unverified claim is anyone's to make. No account is ever created.
 */
export async function findOidcAccount(
  deps: Deps,
  options: { provider: OidcProviderConfig; identity: OidcIdentity },
): Promise<OidcAccount> {
  const { provider, identity } = options;
  const tenant = provider.tenant ?? deps.config.admin.tenant;
  const accounts = () => signInAccounts(deps.db).where('tenants.name', '=', tenant);

  // A link to an account since deleted, or in another tenant, is ignored and replaced by the e-mail match.
  const linked = await accounts()
    .innerJoin('oidc_identities', 'oidc_identities.user_id', 'users.id')
    .where('oidc_identities.provider', '=', provider.name)
    .where('oidc_identities.subject', '=', identity.subject)
    .executeTakeFirst();
  if (linked) return { ...linked, linked: true };

  if (!identity.email) {
    throw new Unauthenticated(
      'The identity provider did not share an e-mail address; allow the "email" scope and try again',
    );
  }
  if (!identity.emailVerified) {
    throw new Unauthenticated(
      'The identity provider has not verified this e-mail address, so it cannot sign in to an account: verify it with the provider first',
    );
  }
  const matches = await accounts()
    .where('users.email', '=', identity.email.trim().toLowerCase())
    .limit(2)
    .execute();
  if (matches.length > 1) {
    throw new Unauthenticated(
      'Several accounts use the e-mail address given by the identity provider: ask an administrator to make it unique',
    );
  }
  const [match] = matches;
  if (!match) {
    throw new Unauthenticated(
      'No account uses the e-mail address given by the identity provider: ask an administrator to create one',
    );
  }
  return { ...match, linked: false };
}
