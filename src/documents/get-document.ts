import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { loadVisible } from '../core/access/document-access.js';
import { documentView, type DocumentView } from '../core/views/document-view.js';

/** GET /documents/:documentId: 404 for a document the caller may not see. */
export async function getDocument(deps: Deps, actor: Actor, id: string): Promise<DocumentView> {
  return documentView(deps.db, actor, await loadVisible(deps.db, actor, id));
}
