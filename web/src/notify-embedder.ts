import type { EmbedEventName } from './embed-events.js';

/**
 * The signer page's hook for embedding (DESIGN: Embedding): in a frame, what just happened goes to
 * embed-events.ts, which decides whether the parent may hear it. Not framed (nearly every visit),
 * nothing: embed-events.ts is loaded only in a frame, so a signer opening their link directly loads
 * nothing more on a slow phone. Calls keep their order (the module loads once; each call waits for it).
 */
export function notifyEmbedder(
  name: EmbedEventName,
  ids: { documentId?: string | undefined; shareId?: string | undefined } = {},
  error?: { code: string; message: string },
): void {
  if (window.parent === window) return;
  void import('./embed-events.js').then((events) => events.postEmbedEvent(name, ids, error));
}
