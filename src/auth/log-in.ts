import { writeTransaction } from '../store/db/dialect.js';
import { record } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { Unauthenticated } from '../base/errors.js';
import { openSession, signInAccounts } from '../core/identity/create-session.js';
import { checkGuess, passwordKeys } from '../core/identity/login-throttle.js';
import { loginResponse, type LoginResponse } from '../core/identity/login-response.js';
import { verifyAgainstDummy, verifyPassword } from '../core/identity/secrets.js';

export interface LogInOptions {
  name: string;
  password: string;
  tenant?: string | undefined;
  /** The client's address, for per-address throttling. */
  address: string;
  requestId: string;
}

/**
 * POST /login (spec: Session token table): a valid name and password give a token, unlocked for an
 * account without MFA and locked for one with MFA.
 */
export async function logIn(
  deps: Deps,
  options: LogInOptions,
): Promise<{ token: string; response: LoginResponse }> {
  const tenantName = options.tenant ?? deps.config.admin.tenant;
  const name = options.name.trim().toLowerCase();
  const { accountKey, keys } = passwordKeys(deps, { tenant: tenantName, name, address: options.address });
  const now = deps.clock.now();
  // The attempt is reserved before the slow hash, so parallel guesses count (login-throttle.ts); a
  // proven password of an active account clears the account's failures; the rest is given back.
  const user = await checkGuess(
    deps,
    keys,
    async () => {
      const found = await signInAccounts(deps.db)
        .select('users.password_hash')
        .where('tenants.name', '=', tenantName)
        .where('users.name', '=', name)
        .executeTakeFirst();
      const passwordOk = found?.password_hash
        ? await verifyPassword(found.password_hash, options.password)
        : await verifyAgainstDummy(options.password);
      if (!found || !passwordOk) {
        if (found) {
          await writeTransaction(deps.db, deps.dialect, (trx) =>
            record(trx, {
              tenantId: found.tenant_id,
              actorId: found.name,
              activityType: 'loginFailed',
              objectType: 'user',
              objectId: found.id,
              requestId: options.requestId,
              at: now,
            }),
          );
        }
        throw new Unauthenticated('Invalid name or password');
      }
      return found;
    },
    { clear: (found) => (found.status === 'active' ? [accountKey] : []) },
  );
  // Only after the password is proven, so the answer does not reveal the state of others' accounts.
  if (user.status !== 'active') throw new Unauthenticated('This account is suspended');

  const unlocked = user.mfa_enabled === 0;
  const { token } = await writeTransaction(deps.db, deps.dialect, (trx) =>
    openSession(trx, deps, user, {
      activityType: 'logged',
      data: { method: 'password', unlocked },
      requestId: options.requestId,
      now,
    }),
  );
  return { token, response: await loginResponse(deps, { userId: user.id, unlocked, token }) };
}
