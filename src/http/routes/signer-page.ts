import { createReadStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlibConstants, gzip as gzipCallback } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { NotFound } from '../../base/errors.js';
import { isShareToken } from '../../core/sharing/recipient.js';
import { errorBody } from '../error-handler.js';

/** Where `npm run build` puts the page (web/vite.config.ts): dist/web, from src/ or from dist/. */
const BUILT_PAGE = fileURLToPath(new URL('../../../dist/web/', import.meta.url));

/**
 * The page's policy: its own scripts, styles, fonts and workers only; nothing inline, no eval, no
 * plugins, no framing. `blob:` images are the signer's own upload previews. With FILES_PUBLIC_URL,
 * the page also fetches the document's bytes from that origin (the API's 303 leads there). With
 * `embedders` (EMBED_ALLOWED_ORIGINS, DESIGN: Embedding), those sites, and only they, may frame it.
 */
export function signerPageCsp(filesOrigin?: string, embedders: readonly string[] = []): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' blob:",
    "font-src 'self'",
    filesOrigin ? `connect-src 'self' ${filesOrigin}` : "connect-src 'self'",
    "worker-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    embedders.length > 0 ? `frame-ancestors 'self' ${embedders.join(' ')}` : "frame-ancestors 'none'",
  ].join('; ');
}

export const SIGNER_PAGE_CSP = signerPageCsp();

const brotli = promisify(brotliCompress);
const gzip = promisify(gzipCallback);

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.ttf': 'font/ttf',
  '.pfb': 'application/x-font-type1',
  '.bcmap': 'application/octet-stream',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** The built files worth compressing: text (fonts, images and wasm are compressed already or barely shrink). */
const COMPRESSIBLE = new Set(['.js', '.mjs', '.css', '.svg', '.bcmap', '.wasm']);

type Encoding = 'br' | 'gzip';

/** The encoding to answer with: brotli when accepted, else gzip, else none (q=0 refuses one). */
function preferredEncoding(header: string | string[] | undefined): Encoding | undefined {
  const accepted = new Map<string, number>();
  for (const part of (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    accepted.set(name, q === undefined ? 1 : Number(q));
  }
  const allowed = (name: Encoding) => (accepted.get(name) ?? accepted.get('*') ?? 0) > 0;
  if (allowed('br')) return 'br';
  if (allowed('gzip')) return 'gzip';
  return undefined;
}

async function compress(bytes: Buffer, encoding: Encoding): Promise<Buffer> {
  return encoding === 'br'
    ? brotli(bytes, {
        params: {
          [zlibConstants.BROTLI_PARAM_QUALITY]: 9,
          [zlibConstants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
        },
      })
    : gzip(bytes, { level: 9 });
}

const HTML_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': SIGNER_PAGE_CSP,
  // The address carries the share token: it must not leave in a Referer header or stay in a cache.
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

/** What a framed link page (not the signer's page) tells its embedder: why there is nothing to sign. */
type LinkEventCode = 'LINK_UNKNOWN' | 'LINK_ENDED' | 'ALREADY_RESPONDED';

/** The embedders, for the page to check its parent against (web/src/embed-events.ts reads it). */
function embeddersMeta(embedders: readonly string[]): string {
  // Origins are validated at start (config.ts): no quote or angle bracket can be in them.
  return `<meta name="signery-embed-origins" content="${embedders.join(' ')}">`;
}

function linkEventTags(embedders: readonly string[], code: LinkEventCode, script: string): string {
  return `${embeddersMeta(embedders)}<meta name="signery-link-event" content="${code}"><script type="module" src="${script}"></script>`;
}

/** The built signer page, told its embedders (none: as built). */
function withEmbedders(html: Buffer | undefined, embedders: readonly string[]): Buffer | undefined {
  if (!html || embedders.length === 0) return html;
  return Buffer.from(html.toString('utf8').replace('</head>', `${embeddersMeta(embedders)}</head>`));
}

/** Signery's mark: a pen stroke on a page, in the page's accent colour (every page links it). */
const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f4e8c"/><path d="M7 21c3-6 5-6 6-2s3 4 5-1 3-4 4 0 3 2 3 2" fill="none" stroke="#fff" stroke-width="2.5" stroke-linecap="round" stroke-linejoin="round"/><path d="M7 25h18" stroke="#fff" stroke-opacity=".6" stroke-width="1.5" stroke-linecap="round"/></svg>`;

const ICON_LINK = '<link rel="icon" href="/favicon.svg" type="image/svg+xml">';

/**
 * What a person who opens the service's address sees: what it is and where to go, never the API's
 * JSON. The address carries nothing secret; the page names no installation detail.
 */
const HOME_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Signery</title>${ICON_LINK}</head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5">
<main>
<h1>Signery</h1>
<p>This is a service for signing documents.</p>
<ul>
<li>Asked to sign something? Open the link in the e-mail you received: it leads to your document.</li>
<li>Have an account here? <a href="/sign">See the documents waiting for you</a>, or <a href="/prepare">prepare one to send</a>: draw where each recipient signs.</li>
<li>Received a signed PDF? <a href="/verify">Check it</a>: who signed, when, and whether anything changed since.</li>
</ul>
</main>
</body>
</html>
`;

const NOT_A_LINK_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Link not found · Signery</title>${ICON_LINK}</head>
<body>
<main>
<h1>This link does not work</h1>
<p>The address is incomplete or mistyped. Open the link from your e-mail again, or copy the whole
address into the browser. If it still does not work, ask the sender for a new link.</p>
</main>
</body>
</html>
`;

/** A page of few words for a person who opened a share link (no script: the page's policy allows none inline). */
function linkPage(title: string, paragraphs: string[], language = 'en'): string {
  return `<!doctype html>
<html lang="${language}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Signery</title>${ICON_LINK}</head>
<body>
<main>
<h1>${title}</h1>
${paragraphs.map((p) => `<p>${p}</p>`).join('\n')}
</main>
</body>
</html>
`;
}

const LINK_ENDED_PAGE = linkPage('This link has ended', [
  'The request this link was sent for is over: it expired, was withdrawn or handed to someone else, was declined, or the document was removed. The link no longer opens the document.',
  'If you still need to act on it, ask the sender for a new request.',
]);

/** What the address /s/<token> leads to (core/sharing/recipient.ts `shareLinkStanding`). */
export type LinkStanding =
  | { standing: 'unknown' | 'ended' | 'live' }
  | { standing: 'completed'; downloadUntil: Date; linkDownloads: boolean; language?: string | undefined };

/** The completed page's words in the share e-mails' languages (the signer page's `share.done` heading). */
const COMPLETED_TEXTS = {
  en: {
    title: 'You have already responded',
    download: 'Thank you: your part is done. This link now only downloads the document as you signed it.',
    link: 'Download the signed document',
    until: 'until',
  },
  de: {
    title: 'Sie haben bereits geantwortet',
    download:
      'Danke: Ihr Teil ist erledigt. Dieser Link lädt jetzt nur noch das Dokument, wie Sie es unterschrieben haben.',
    link: 'Das unterschriebene Dokument herunterladen',
    until: 'bis',
  },
  fr: {
    title: 'Vous avez déjà répondu',
    download:
      'Merci : votre part est faite. Ce lien ne sert plus qu’à télécharger le document tel que vous l’avez signé.',
    link: 'Télécharger le document signé',
    until: 'jusqu’au',
  },
} as const;

/** An unprotected link whose recipient acted: the download, at once (a protected one opens the signer page). */
function completedPage(token: string, done: { downloadUntil: Date; language?: string | undefined }): string {
  const language = done.language && done.language in COMPLETED_TEXTS ? (done.language as 'de' | 'fr') : 'en';
  const text = COMPLETED_TEXTS[language];
  const until = done.downloadUntil.toISOString().slice(0, 10);
  return linkPage(
    text.title,
    [
      text.download,
      // The address already carries the token; the download stays on this origin.
      `<a href="/api/v1/share/signed?token=${encodeURIComponent(token)}" download>${text.link}</a> (${text.until} ${until}).`,
    ],
    language,
  );
}

/**
 * The signer's page (issue 9), served from the API's origin: GET /s/:token (an external recipient's
 * share link, Contract), GET /sign and /sign/:documentId (internal users' pending documents) answer
 * the built index.html with its Content-Security-Policy, GET /verify (with `verifyPage`: the public
 * verification page, issue 27) the built verify.html, GET /prepare and /prepare/:documentId (a sender's
 * page that places a share's fields, issue 40) the built prepare.html, all with the same policy;
 * /web/assets/* are the built files, whose
 * names carry content hashes, so they are cached for a year. The routes read no token: the page
 * itself calls the public API.
 */
export function signerPageRoutes(
  options: {
    dir?: string;
    verifyPage?: boolean;
    /** What a share link leads to: without it every well-formed link gets the signer page. */
    linkStanding?: (token: string) => Promise<LinkStanding>;
    /** FILES_PUBLIC_URL, which the page may fetch the document from. */
    filesOrigin?: string;
    /**
     * EMBED_ALLOWED_ORIGINS: the sites that may frame the signer's page (its addresses under /s/ and
     * /sign), which it then tells what happens (web/src/embed-events.ts). The home page, the
     * verification page and every other answer stay unframeable.
     */
    embedOrigins?: readonly string[];
  } = {},
) {
  const dir = options.dir ?? BUILT_PAGE;
  const embedders = options.embedOrigins ?? [];
  const htmlHeaders = options.filesOrigin
    ? { ...HTML_HEADERS, 'content-security-policy': signerPageCsp(options.filesOrigin) }
    : HTML_HEADERS;
  // The signer's page, framed by the embedders: X-Frame-Options knows no list of sites, so it goes
  // and frame-ancestors alone decides (every browser that frames honours it).
  const pageHeaders: Record<string, string> =
    embedders.length > 0
      ? {
          ...Object.fromEntries(Object.entries(HTML_HEADERS).filter(([name]) => name !== 'x-frame-options')),
          'content-security-policy': signerPageCsp(options.filesOrigin, embedders),
        }
      : htmlHeaders;
  return async (app: FastifyInstance) => {
    const built = (name: string) => {
      const path = join(dir, name);
      return existsSync(path) ? readFileSync(path) : undefined;
    };
    const assetNames = existsSync(join(dir, 'assets')) ? readdirSync(join(dir, 'assets')) : [];
    const html = withEmbedders(built('index.html'), embedders);
    const verifyHtml = built('verify.html');
    const prepareHtml = built('prepare.html');
    const assetsDir = join(dir, 'assets');
    // The served names are exactly the built ones: a request never becomes a path on disk.
    const assets = new Map<string, { path: string; size: number; type: string }>();
    // `<name>.br` and `<name>.gz` beside a file are its compressed forms, made by the build
    // (scripts/compress-assets.mjs): served for it, never under their own names.
    const precompressed = new Map<string, string>();
    if (existsSync(assetsDir)) {
      for (const name of readdirSync(assetsDir)) {
        const path = join(assetsDir, name);
        const stat = statSync(path);
        if (!stat.isFile()) continue;
        const made = /^(.+)\.(br|gz)$/.exec(name);
        if (made?.[1] && made[2]) {
          precompressed.set(`${made[2] === 'br' ? 'br' : 'gzip'}:${made[1]}`, path);
          continue;
        }
        assets.set(name, {
          path,
          size: stat.size,
          type: TYPES[extname(name)] ?? 'application/octet-stream',
        });
      }
    }

    // A framed link page (ended, answered, not a link) tells its embedder too: a small script of the
    // build (web/src/link-events.ts), included only when there are embedders.
    const linkScript = assetNames.find((name) => /^link-events-[\w-]+\.js$/.test(name));
    const linkEvent = (code: LinkEventCode) =>
      embedders.length > 0 && linkScript ? linkEventTags(embedders, code, `/web/assets/${linkScript}`) : '';
    const serve =
      (file: Buffer | undefined, what: string, headers: Record<string, string> = htmlHeaders) =>
      async (_request: unknown, reply: FastifyReply) => {
        if (!file) {
          return reply
            .status(503)
            .send(errorBody(503, `The ${what} is not built: run npm run build`, 'UNAVAILABLE'));
        }
        return reply.headers(headers).send(file);
      };
    const page = serve(html, 'signer page', pageHeaders);
    // An address under /s/ that is not a share link (none, a mistyped one, extra segments) is the
    // person's browser asking: a page that says so, not the API's JSON. The address is not repeated.
    const notALink = async (_request: unknown, reply: FastifyReply) =>
      reply
        .status(404)
        .headers(pageHeaders)
        .send(NOT_A_LINK_PAGE.replace('</head>', `${linkEvent('LINK_UNKNOWN')}</head>`));
    const route = { config: { auth: 'none' as const }, schema: { hide: true } };
    // A link whose share ended (or whose recipient acted) is a page that says so, never the signer
    // page (DESIGN: "a share's link has no power once its share has ended … a human page at /s/…").
    app.get<{ Params: { token: string } }>('/s/:token', route, async (request, reply) => {
      const { token } = request.params;
      if (!isShareToken(token)) return notALink(request, reply);
      const link = options.linkStanding ? await options.linkStanding(token) : { standing: 'live' as const };
      switch (link.standing) {
        case 'unknown':
          return notALink(request, reply);
        case 'ended':
          return reply
            .status(410)
            .headers(pageHeaders)
            .send(LINK_ENDED_PAGE.replace('</head>', `${linkEvent('LINK_ENDED')}</head>`));
        case 'completed':
          // A protected share's link downloads nothing by itself: the signer page asks for the
          // password or a new code again, and its session then downloads (issue 40, 1).
          if (!link.linkDownloads) return page(request, reply);
          return reply
            .headers(pageHeaders)
            .send(completedPage(token, link).replace('</head>', `${linkEvent('ALREADY_RESPONDED')}</head>`));
        case 'live':
          return page(request, reply);
      }
    });
    app.get('/s', route, notALink);
    app.get('/s/*', route, notALink);
    app.get('/sign', route, page);
    app.get('/', route, async (_request, reply) => reply.headers(htmlHeaders).send(HOME_PAGE));
    const icon = async (_request: unknown, reply: FastifyReply) =>
      reply
        .headers({
          'content-type': 'image/svg+xml',
          'cache-control': 'public, max-age=86400',
          'x-content-type-options': 'nosniff',
        })
        .send(FAVICON);
    // Like the page's own files, not counted against the client address.
    const asset = { config: { ...route.config, rateLimit: false }, schema: route.schema };
    app.get('/favicon.svg', asset, icon);
    app.get('/favicon.ico', asset, icon);
    app.get('/sign/:documentId', route, page);
    // The public verification page (issue 27): anyone checks a signed PDF (POST /verify, public-verify.ts).
    if (options.verifyPage) app.get('/verify', route, serve(verifyHtml, 'verification page'));
    // The prepare page (issue 40): a sender draws a share's fields on the PDF and sends POST /share
    // (or copies its body). It reads nothing here: the page calls the public API with the sender's
    // session cookie or API key, so it can do nothing its caller could not do with curl.
    const prepare = serve(prepareHtml, 'prepare page');
    app.get('/prepare', route, prepare);
    app.get('/prepare/:documentId', route, prepare);
    // The same page decides what an AI agent asked to do (issue 42): the mail to the key's owner links
    // here, with no credential; the person signs in and the page calls GET /agent-actions/{id} and
    // POST /agent-actions/{id}/approve or /reject.
    app.get('/approve/:id', route, prepare);

    // The page's own files (scripts, fonts, the PDF viewer's character maps), served from
    // disk and cached for a year: not counted against the client address, where a signer opening a PDF with
    // many fonts behind an office's one address would use up everyone's allowance.
    // Text files go out compressed when the browser takes it (brotli, else gzip): as the build
    // compressed them (brotli at its best, off the request path), else compressed once, on first
    // request (a tree built without that step), and kept; the built files are a few megabytes in all.
    const compressed = new Map<string, Promise<Buffer>>();
    const compressedAs = (name: string, path: string, encoding: Encoding) => {
      const key = `${encoding}:${name}`;
      let made = compressed.get(key);
      if (!made) {
        const ready = precompressed.get(key);
        made = ready ? readFile(ready) : readFile(path).then((bytes) => compress(bytes, encoding));
        compressed.set(key, made);
      }
      return made;
    };
    app.get<{ Params: { name: string } }>('/web/assets/:name', asset, async (request, reply) => {
      const file = assets.get(request.params.name);
      if (!file) throw new NotFound('No such file');
      void reply.headers({
        'content-type': file.type,
        'cache-control': 'public, max-age=31536000, immutable',
        'x-content-type-options': 'nosniff',
        'cross-origin-resource-policy': 'same-origin',
        vary: 'accept-encoding',
      });
      const encoding = COMPRESSIBLE.has(extname(request.params.name))
        ? preferredEncoding(request.headers['accept-encoding'])
        : undefined;
      if (encoding) {
        const body = await compressedAs(request.params.name, file.path, encoding);
        return reply.headers({ 'content-encoding': encoding, 'content-length': body.length }).send(body);
      }
      return reply.header('content-length', file.size).send(createReadStream(file.path));
    });
  };
}
