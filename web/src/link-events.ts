import { postEmbedEvent } from './embed-events.js';

/**
 * The server's few-word pages for a share link that opens nothing (ended, already answered, not a
 * link), when framed by an allowed site (DESIGN: Embedding): they tell it why, as `signery:error`.
 * The server includes this script in them only when EMBED_ALLOWED_ORIGINS is set.
 */
const code = document.querySelector<HTMLMetaElement>('meta[name="signery-link-event"]')?.content;
if (code) {
  postEmbedEvent('error', {}, { code, message: document.querySelector('h1')?.textContent ?? document.title });
}
