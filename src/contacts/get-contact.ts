import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { loadOwnContact } from './contact-access.js';
import { contactView, type ContactView } from './contact-view.js';

/** GET /contacts/:id: one of the caller's contacts (anyone else's is 404). */
export async function getContact(deps: Deps, actor: Actor, id: string): Promise<ContactView> {
  return contactView(await loadOwnContact(deps.db, actor, id));
}
