import type { Actor } from '../auth/actor.js';
import type { Deps } from '../deps.js';
import { loadVisible } from './access.js';
import { documentView, type DocumentView } from './document-view.js';

/** GET /documents/:documentId: 404 for a document the caller may not see. */
export async function getDocument(deps: Deps, actor: Actor, id: string): Promise<DocumentView> {
  return documentView(deps.db, actor, await loadVisible(deps.db, actor, id));
}
