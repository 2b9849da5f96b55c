import { record } from '../audit/record.js';
import type { Deps } from '../deps.js';
import type { Actor } from './actor.js';
import { writeTransaction } from '../store/db/dialect.js';

/** GET /logout: ends only the token used (spec: Session token table); other sessions stay valid. */
export async function logOut(deps: Deps, actor: Actor): Promise<void> {
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await trx
      .deleteFrom('auth_tokens')
      .where('id', '=', actor.tokenId)
      .where('kind', '=', 'session')
      .execute();
    await record(trx, {
      tenantId: actor.tenantId,
      actorId: actor.name,
      activityType: 'loggedOut',
      objectType: 'user',
      objectId: actor.userId,
      requestId: actor.requestId,
      at: deps.clock.now(),
    });
  });
}
