import type { Static } from 'typebox';
import type { EnableMfaBody, RecoveryCodeBody, TotpBody } from './contract.js';
import { randomUUID } from 'node:crypto';
import otplib from 'otplib';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { Forbidden, Unauthenticated, ValidationError } from '../base/errors.js';
import type { Actor } from '../core/access/actor.js';
import { checkGuess } from '../core/identity/login-throttle.js';
import { hashToken, newRecoveryCode, normalizeRecoveryCode } from '../core/identity/secrets.js';
import { writeTransaction } from '../store/db/dialect.js';
import { confirmPassword } from './confirm-password.js';

const RECOVERY_CODE_COUNT = 10;
const MFA_FAILURES = 5;

export interface MfaEnrollment {
  recoveryCodes: string[];
  totpSecret: string;
  otpauthUrl: string;
}

function totpAt(deps: Deps) {
  // One step of drift either way, the usual allowance for phone clocks; time from our clock, so tests can move it.
  return otplib.authenticator.clone({ window: 1, epoch: deps.clock.now().getTime() });
}

/** A TOTP code for a secret at the clock's time (tests and the CLI use it). */
export function totpCode(deps: Deps, secret: string): string {
  return totpAt(deps).generate(secret);
}

/**
 * POST /login/mfa (Contract: MFA): enables MFA on the caller's account and returns the TOTP secret
 * and ten single-use recovery codes, shown this once. Enabling again replaces both.
 */
export async function enableMfa(
  deps: Deps,
  actor: Actor,
  confirm: Static<typeof EnableMfaBody> & { address: string },
): Promise<MfaEnrollment> {
  if (!actor.unlocked) throw new Forbidden('Unlock the session before changing its factors');
  await confirmPassword(deps, actor, confirm.password, confirm.address);
  const secret = otplib.authenticator.generateSecret(20);
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await setMfaSecret(trx, deps, actor, secret);
    await trx
      .insertInto('recovery_codes')
      .values(
        codes.map((c) => ({
          id: randomUUID(),
          user_id: actor.userId,
          code_hash: hashToken(c),
          used_at: null,
        })),
      )
      .execute();
    await recordAction(trx, actor, {
      activityType: 'mfaEnabled',
      objectType: 'user',
      objectId: actor.userId,
      at: deps.clock.now(),
    });
  });
  return {
    recoveryCodes: codes,
    totpSecret: secret,
    otpauthUrl: otplib.authenticator.keyuri(actor.name, `Signery (${actor.tenantName})`, secret),
  };
}

/** DELETE /login/mfa: turns MFA off and drops the recovery codes. */
export async function disableMfa(deps: Deps, actor: Actor): Promise<void> {
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await setMfaSecret(trx, deps, actor, null);
    await recordAction(trx, actor, {
      activityType: 'mfaDisabled',
      objectType: 'user',
      objectId: actor.userId,
      at: deps.clock.now(),
    });
  });
}

/**
 * Gives the caller's account its TOTP secret (MFA on) or takes it away (null: MFA off), in the caller's
 * transaction; the recovery codes of the previous secret go either way.
 */
async function setMfaSecret(trx: Deps['db'], deps: Deps, actor: Actor, secret: string | null): Promise<void> {
  await trx
    .updateTable('users')
    .set({
      mfa_enabled: secret ? 1 : 0,
      mfa_secret: secret,
      totp_last_step: null,
      updated_at: deps.clock.now().toISOString(),
    })
    .where('id', '=', actor.userId)
    .execute();
  await trx.deleteFrom('recovery_codes').where('user_id', '=', actor.userId).execute();
}

async function unlock(
  deps: Deps,
  actor: Actor,
  method: string,
  apply: (trx: Deps['db']) => Promise<boolean>,
) {
  // spec: Session token table: a code moves a *locked* token to unlocked. On a token that is already
  // unlocked there is nothing to move, and a recovery code would be spent for nothing.
  if (actor.unlocked) {
    throw new ValidationError(
      `This session is already unlocked: the ${method === 'totp' ? 'code' : 'recovery code'} was not used`,
    );
  }
  const key = { key: `mfa:${actor.userId}`, max: MFA_FAILURES };
  await checkGuess(
    deps,
    [key],
    async () => {
      const ok = await writeTransaction(deps.db, deps.dialect, async (trx) => {
        if (!(await apply(trx))) return false;
        await trx.updateTable('auth_tokens').set({ unlocked: 1 }).where('id', '=', actor.tokenId).execute();
        await recordAction(trx, actor, {
          activityType: 'sessionUnlocked',
          objectType: 'user',
          objectId: actor.userId,
          data: { method },
          at: deps.clock.now(),
        });
        return true;
      });
      if (!ok) throw new Unauthenticated(`The ${method === 'totp' ? 'code' : 'recovery code'} is not valid`);
    },
    { clear: () => [key.key] },
  );
}

/** POST /login/totp `{code}`: unlocks a locked token with the authenticator app's code. */
export async function unlockWithTotp(
  deps: Deps,
  actor: Actor,
  options: Static<typeof TotpBody>,
): Promise<void> {
  await unlock(deps, actor, 'totp', async (trx) => {
    const user = await trx
      .selectFrom('users')
      .select(['mfa_secret'])
      .where('id', '=', actor.userId)
      .executeTakeFirst();
    if (!user?.mfa_secret) throw new ValidationError('MFA is not enabled on this account');
    const totp = totpAt(deps);
    const delta = totp.checkDelta(options.code.replace(/\s+/g, ''), user.mfa_secret);
    if (delta === null) return false;
    // RFC 6238 §5.2: a time step, once accepted, is not accepted again. The condition and the write
    // are one statement, so of two requests with one code exactly one wins.
    const step = Math.floor(deps.clock.now().getTime() / 1000 / totp.allOptions().step) + delta;
    const taken = await trx
      .updateTable('users')
      .set({ totp_last_step: step })
      .where('id', '=', actor.userId)
      .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
      .executeTakeFirst();
    return taken.numUpdatedRows > 0n;
  });
}

/**
 * POST /login/recovery (spec: Session token table): a valid unused code unlocks the token and is
 * consumed; answers how many codes remain.
 */
export async function unlockWithRecoveryCode(
  deps: Deps,
  actor: Actor,
  options: Static<typeof RecoveryCodeBody>,
): Promise<{ remainingRecoveryCodes: number }> {
  const codeHash = hashToken(normalizeRecoveryCode(options.recoveryCode));
  const now = deps.clock.now().toISOString();
  await unlock(deps, actor, 'recoveryCode', async (trx) => {
    // The used_at condition makes consumption a compare-and-set: two requests with one code cannot both win.
    const used = await trx
      .updateTable('recovery_codes')
      .set({ used_at: now })
      .where('user_id', '=', actor.userId)
      .where('code_hash', '=', codeHash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return used.numUpdatedRows > 0n;
  });
  const remaining = await deps.db
    .selectFrom('recovery_codes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', actor.userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return { remainingRecoveryCodes: Number(remaining.n) };
}
