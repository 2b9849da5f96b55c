/**
 * Embedded signing (DESIGN: Embedding). When a site listed in EMBED_ALLOWED_ORIGINS frames the
 * signer's page, the page tells it what happens: `{type: 'signery:<event>', documentId, shareId}` for
 * `ready`, `signed`, `rejected`, `delegated` and `error` (with a `code` and a `message`), and
 * `executed` for an approval, review, acceptance or task. Nothing secret is ever posted: no token, no
 * session, no field value.
 *
 * The server names the allowed sites in the served page (`<meta name="signery-embed-origins">`); the
 * page posts only to its parent, only with that parent's own origin as the target, and only when that
 * origin is one of them: never to `*`. Not framed, or framed by another site (which the page's
 * frame-ancestors stops anyway): nothing is posted.
 */

export type EmbedEventName = 'ready' | 'signed' | 'rejected' | 'delegated' | 'executed' | 'error';

export interface EmbedEvent {
  type: `signery:${EmbedEventName}`;
  documentId: string | null;
  shareId: string | null;
  /** `error` only: what went wrong, in the API's codes (`LINK_ENDED`, `UNAUTHENTICATED`, …). */
  code?: string;
  message?: string;
}

/** The sites the server allows to frame this page (empty: embedding is off). */
export function allowedEmbedders(): string[] {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="signery-embed-origins"]');
  return (meta?.content ?? '').split(/\s+/).filter((origin) => origin !== '');
}

/**
 * The framing site's origin when it is an allowed one. Chromium and Safari name it in
 * `location.ancestorOrigins` (kept across the frame's own navigations); elsewhere the referrer of the
 * frame's first page, which is the parent's address (or its origin, by the default referrer policy).
 */
export function embedderOrigin(): string | undefined {
  if (window.parent === window) return undefined;
  let origin: string | undefined;
  const ancestors = window.location.ancestorOrigins as DOMStringList | undefined;
  if (ancestors && ancestors.length > 0) origin = ancestors[0] ?? undefined;
  else if (document.referrer) {
    try {
      origin = new URL(document.referrer).origin;
    } catch {
      origin = undefined;
    }
  }
  return origin && allowedEmbedders().includes(origin) ? origin : undefined;
}

let readySent = false;

/** Tells the framing site, if an allowed one frames the page, what just happened. */
export function postEmbedEvent(
  name: EmbedEventName,
  ids: { documentId?: string | undefined; shareId?: string | undefined } = {},
  error?: { code: string; message: string },
): void {
  const origin = embedderOrigin();
  if (!origin) return;
  // `ready` once per page: a change of language or a re-render shows the same document again.
  if (name === 'ready') {
    if (readySent) return;
    readySent = true;
  }
  const event: EmbedEvent = {
    type: `signery:${name}`,
    documentId: ids.documentId ?? null,
    shareId: ids.shareId ?? null,
    ...(error ? { code: error.code, message: error.message } : {}),
  };
  window.parent.postMessage(event, origin);
}
