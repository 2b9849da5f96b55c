import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { loadVisibleTemplate } from '../core/access/template-access.js';
import { templateView } from './template-view.js';

/** GET /templates/:templateId: a template the caller may see (see template-access.ts); others are 404. */
export async function getTemplate(deps: Deps, actor: Actor, id: string): Promise<Record<string, unknown>> {
  const row = await loadVisibleTemplate(deps.db, actor, id);
  const owner = await deps.db
    .selectFrom('users')
    .select('name')
    .where('id', '=', row.owner_id)
    .executeTakeFirst();
  return templateView(row, owner?.name ?? row.owner_id);
}
