import { openSession, signInAccounts } from '../core/identity/create-session.js';
import { loginResponse, type LoginResponse } from '../core/identity/login-response.js';
import { hashPassword, hashToken } from '../core/identity/secrets.js';
import type { Deps } from '../core/deps.js';
import { Unauthenticated } from '../base/errors.js';
import { writeTransaction } from '../store/db/dialect.js';

/**
 * PUT /users/activate: a user created without a password sets one with the activation token they
 * were given, and is logged in (the answer is a Login response; `returnToken` as on POST /login).
 */
export async function activateUser(
  deps: Deps,
  options: { activationToken: string; password: string; requestId: string },
): Promise<{ token: string; response: LoginResponse }> {
  const now = deps.clock.now();
  const passwordHash = await hashPassword(options.password);
  const session = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const activation = await trx
      .deleteFrom('activation_tokens')
      .where('token_hash', '=', hashToken(options.activationToken))
      .returning(['user_id', 'expires_at'])
      .executeTakeFirst();
    if (!activation || new Date(activation.expires_at) <= now) {
      throw new Unauthenticated('The activation token is not valid or has expired');
    }
    const user = await signInAccounts(trx)
      .where('users.id', '=', activation.user_id)
      .executeTakeFirstOrThrow();
    if (user.status !== 'active') throw new Unauthenticated('This account is suspended');
    await trx
      .updateTable('users')
      .set({ password_hash: passwordHash, updated_at: now.toISOString() })
      .where('id', '=', user.id)
      .execute();
    const created = await openSession(trx, deps, user, {
      activityType: 'accountActivated',
      requestId: options.requestId,
      now,
    });
    return { ...created, userId: user.id };
  });
  return {
    token: session.token,
    response: await loginResponse(deps, {
      userId: session.userId,
      unlocked: session.unlocked,
      token: session.token,
    }),
  };
}
