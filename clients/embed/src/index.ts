/**
 * Signery's signer page inside your own web app (DESIGN: Embedding). The Signery server must list your
 * site's origin in EMBED_ALLOWED_ORIGINS; the framed page then posts what happens to it, and this
 * module passes on only the messages that come from its own iframe and from the Signery origin.
 *
 * ```ts
 * import { mountSignery } from '@signery/embed';
 *
 * const signing = mountSignery(document.getElementById('signing')!, {
 *   url: shareLink, // https://sign.example.com/s/shr_…, as POST /share answered it
 *   onEvent: (event) => console.log(event.type, event.documentId),
 * });
 * for await (const event of signing.events()) if (event.type === 'signed') break;
 * signing.destroy();
 * ```
 *
 * Or, without a script of your own: `defineSigneryElement()` once, then
 * `<signery-signing src="https://sign.example.com/s/shr_…"></signery-signing>`, which dispatches
 * `signery:ready`, `signery:signed`, … DOM events (the event's `detail` is the SigneryEvent).
 */

/** What the framed page reports. `executed`: an approval, review, acceptance or task was done. */
export type SigneryEventType = 'ready' | 'signed' | 'rejected' | 'delegated' | 'executed' | 'error';

export const SIGNERY_EVENT_TYPES: readonly SigneryEventType[] = [
  'ready',
  'signed',
  'rejected',
  'delegated',
  'executed',
  'error',
];

/** One message of the framed page: never a token or a field's value. */
export interface SigneryEvent {
  type: SigneryEventType;
  /** The document and the recipient's share (null when the link opened none: an `error`). */
  documentId: string | null;
  shareId: string | null;
  /** `error` only: the API's code (`LINK_ENDED`, `UNAUTHENTICATED`, `ALREADY_RESPONDED`, …) and a sentence. */
  code?: string;
  message?: string;
}

export interface MountOptions {
  /** The recipient's share link (`https://<signery>/s/shr_…`) or a `/sign/<documentId>` address. */
  url: string;
  /** Called for every event of this iframe. */
  onEvent?: (event: SigneryEvent) => void;
  /** The iframe's accessible name (default "Document to sign"). */
  title?: string;
  /** CSS height of the iframe (default `100%` of the container, at least 32rem). */
  height?: string;
}

export interface SigneryEmbed {
  readonly iframe: HTMLIFrameElement;
  /** The Signery origin the iframe shows, the only one whose messages are listened to. */
  readonly origin: string;
  /** Listens to one event type (or all, `*`); answers the function that stops listening. */
  on(type: SigneryEventType | '*', listener: (event: SigneryEvent) => void): () => void;
  /** The events from now on, as an async iterable; it ends when the embed is destroyed. */
  events(): AsyncIterableIterator<SigneryEvent>;
  /** Removes the iframe and stops listening. */
  destroy(): void;
}

/** A message as the Signery page posts it: `{type: 'signery:<event>', documentId, shareId, …}`. */
function asEvent(data: unknown): SigneryEvent | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const message = data as Record<string, unknown>;
  const type = typeof message.type === 'string' ? message.type : '';
  const name = type.startsWith('signery:') ? type.slice('signery:'.length) : '';
  if (!(SIGNERY_EVENT_TYPES as readonly string[]).includes(name)) return undefined;
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  const event: SigneryEvent = {
    type: name as SigneryEventType,
    documentId: text(message.documentId),
    shareId: text(message.shareId),
  };
  const code = text(message.code);
  const said = text(message.message);
  if (code !== null) event.code = code;
  if (said !== null) event.message = said;
  return event;
}

/** Frames the signer page in `container` and reports what the signer does there. */
export function mountSignery(container: HTMLElement, options: MountOptions): SigneryEmbed {
  const url = new URL(options.url, window.location.href);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Error(`mountSignery: the url must be an http(s) address, got "${options.url}"`);
  }
  const origin = url.origin;
  const iframe = document.createElement('iframe');
  iframe.src = url.href;
  iframe.title = options.title ?? 'Document to sign';
  // No powerful feature is delegated to the page (it needs none); it may go full screen.
  iframe.allow = 'fullscreen';
  // The page learns the host's origin, never its address.
  iframe.referrerPolicy = 'origin';
  iframe.style.display = 'block';
  iframe.style.width = '100%';
  iframe.style.height = options.height ?? '100%';
  iframe.style.minHeight = '32rem';
  iframe.style.border = '0';

  const listeners = new Set<{ type: SigneryEventType | '*'; listener: (event: SigneryEvent) => void }>();
  const waiting: ((result: IteratorResult<SigneryEvent>) => void)[] = [];
  const queues = new Set<SigneryEvent[]>();
  let destroyed = false;

  const onMessage = (message: MessageEvent) => {
    // Only this iframe's page, at the Signery origin: any other window could post look-alikes.
    if (message.source !== iframe.contentWindow || message.origin !== origin) return;
    const event = asEvent(message.data);
    if (!event) return;
    options.onEvent?.(event);
    for (const { type, listener } of [...listeners]) if (type === '*' || type === event.type) listener(event);
    for (const queue of queues) queue.push(event);
    for (const resolve of waiting.splice(0)) resolve({ value: event, done: false });
  };
  window.addEventListener('message', onMessage);
  container.append(iframe);

  return {
    iframe,
    origin,
    on(type, listener) {
      const entry = { type, listener };
      listeners.add(entry);
      return () => listeners.delete(entry);
    },
    events() {
      const queue: SigneryEvent[] = [];
      queues.add(queue);
      const iterator: AsyncIterableIterator<SigneryEvent> = {
        next() {
          const next = queue.shift();
          if (next) return Promise.resolve({ value: next, done: false });
          if (destroyed) return Promise.resolve({ value: undefined, done: true });
          return new Promise((resolve) =>
            waiting.push((result) => {
              // Every iterator gets every event: this one takes it from its own queue.
              if (!result.done) queue.shift();
              resolve(result);
            }),
          );
        },
        return() {
          queues.delete(queue);
          return Promise.resolve({ value: undefined, done: true });
        },
        [Symbol.asyncIterator]() {
          return iterator;
        },
      };
      return iterator;
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      window.removeEventListener('message', onMessage);
      listeners.clear();
      iframe.remove();
      for (const resolve of waiting.splice(0)) resolve({ value: undefined, done: true });
    },
  };
}

/**
 * Registers `<signery-signing src="…">` (or another tag name): it frames `src` and dispatches each
 * event as a DOM event named `signery:<type>` (bubbling, `detail` the SigneryEvent). Optional
 * attributes: `title` (the iframe's name) and `height`.
 */
export function defineSigneryElement(tagName = 'signery-signing'): void {
  if (customElements.get(tagName)) return;
  class SignerySigning extends HTMLElement {
    #embed: SigneryEmbed | undefined;

    static get observedAttributes(): string[] {
      return ['src'];
    }

    connectedCallback(): void {
      this.#mount();
    }

    disconnectedCallback(): void {
      this.#embed?.destroy();
      this.#embed = undefined;
    }

    attributeChangedCallback(): void {
      if (this.isConnected) this.#mount();
    }

    #mount(): void {
      this.#embed?.destroy();
      this.#embed = undefined;
      const src = this.getAttribute('src');
      if (!src) return;
      const title = this.getAttribute('title');
      const height = this.getAttribute('height');
      this.#embed = mountSignery(this, {
        url: src,
        ...(title ? { title } : {}),
        ...(height ? { height } : {}),
        onEvent: (event) =>
          this.dispatchEvent(
            new CustomEvent(`signery:${event.type}`, { detail: event, bubbles: true, composed: true }),
          ),
      });
    }
  }
  customElements.define(tagName, SignerySigning);
}
