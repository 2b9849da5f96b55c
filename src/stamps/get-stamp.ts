import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { loadVisibleStamp } from '../core/stamps/stamp-access.js';
import { stampView, type StampView } from './stamp-view.js';

/** GET /stamps/:id: a stamp the caller may use or manage; any other is "not found" (never leak existence). */
export async function getStamp(deps: Deps, actor: Actor, id: string): Promise<StampView> {
  return stampView(deps.db, await loadVisibleStamp(deps.db, actor, id));
}
