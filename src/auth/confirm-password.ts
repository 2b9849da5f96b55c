import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { Forbidden } from '../base/errors.js';
import { checkGuess, passwordKeys } from '../core/identity/login-throttle.js';
import { verifyPassword } from '../core/identity/secrets.js';

/** A wrong password given again: 403 (the session stays valid), counted as a failed guess. */
class WrongPassword extends Forbidden {}

/**
 * Re-authentication before a change to how the account signs in (DESIGN, Decided this round: a
 * password to turn MFA on): the caller's session is not enough, the account's password must be
 * given again. A wrong one counts against the same limits as POST /login, per account and address.
 */
export async function confirmPassword(
  deps: Deps,
  actor: Actor,
  password: string,
  address: string,
): Promise<void> {
  const { accountKey, keys } = passwordKeys(deps, { tenant: actor.tenantName, name: actor.name, address });
  const user = await deps.db
    .selectFrom('users')
    .select('password_hash')
    .where('id', '=', actor.userId)
    .executeTakeFirst();
  const passwordHash = user?.password_hash;
  if (!passwordHash) {
    throw new Forbidden(
      'This account signs in through an identity provider and has no password to confirm: its second factor is the provider’s',
    );
  }
  // A guess like a login's: the attempt is taken before the password is checked (parallel ones count).
  await checkGuess(
    deps,
    keys,
    async () => {
      if (!(await verifyPassword(passwordHash, password)))
        throw new WrongPassword('The password is not right');
    },
    { clear: () => [accountKey], isWrong: (error) => error instanceof WrongPassword },
  );
}
