import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import type { Actor } from '../core/access/actor.js';
import { ValidationError } from '../base/errors.js';
import { writeTransaction } from '../store/db/dialect.js';

/**
 * GET /logout: ends only the token used (spec: Session token table); other sessions stay valid.
 * An API key is not a session: it ends only by DELETE /api/key/:token (spec: API key), so logging
 * out with one is refused rather than answered SUCCESS with the key still valid.
 */
export async function logOut(deps: Deps, actor: Actor): Promise<void> {
  if (actor.tokenKind !== 'session') {
    throw new ValidationError('An API key is not a session: revoke it with DELETE /api/key/{key}');
  }
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await trx
      .deleteFrom('auth_tokens')
      .where('id', '=', actor.tokenId)
      .where('kind', '=', 'session')
      .execute();
    await recordAction(trx, actor, {
      activityType: 'loggedOut',
      objectType: 'user',
      objectId: actor.userId,
      at: deps.clock.now(),
    });
  });
}
