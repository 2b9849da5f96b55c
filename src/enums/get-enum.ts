import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { loadVisibleEnum } from '../core/access/enum-access.js';
import { enumView, type EnumView } from './enum-view.js';

/** GET /enums/:name: an enum of the caller's organization (another organization's is 404). */
export async function getEnum(deps: Deps, actor: Actor, name: string): Promise<EnumView> {
  return enumView(deps.db, await loadVisibleEnum(deps.db, actor, name));
}
