import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Frame } from 'playwright-core';
import { ConfigError, loadConfig } from '../../src/base/config.js';
import { aDocument } from '../helpers/documents.js';
import { aUser, OWNER } from '../helpers/people.js';
import { anExternalShare } from '../helpers/sharing.js';
import { useServer, useStarted } from '../helpers/use-server.js';
import { ensureBuiltPage, hasChromium, inSession, launchChromium, Session } from './browser.js';

/**
 * Embedded signing (issue 40, reproduction 9 and Deliver 8; DESIGN "Decided this round", Embedding):
 * "EMBED_ALLOWED_ORIGINS (comma-separated origins) lets those sites frame the signer page; it then
 * posts {type: 'signery:<event>', documentId, shareId} to its parent for ready, signed, rejected,
 * delegated and error."
 */

const ROOT = join(import.meta.dirname, '..', '..');
const EMBED_PACKAGE = join(ROOT, 'clients', 'embed');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The embed package as a host loads it: built by its own tsconfig into one ES module (once). */
let embedModule: string | undefined;
function builtEmbedPackage(): string {
  if (embedModule !== undefined) return embedModule;
  const built = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', EMBED_PACKAGE],
    { stdio: 'inherit' },
  );
  if (built.status !== 0) throw new Error('tsc -p clients/embed failed');
  embedModule = readFileSync(join(EMBED_PACKAGE, 'dist', 'index.js'), 'utf8');
  return embedModule;
}

/**
 * An integrator's web app on an origin of its own (`http://localhost:<port>`, another site than the
 * server's 127.0.0.1): `/host.html?link=…` frames the link with the embed package (`&element` with
 * its web component) and keeps every event it passes on in `window.signeryEvents`, and every message
 * the window received at all in `window.messages`.
 */
interface Host {
  origin: string;
  page(link: string, options?: { element?: boolean }): string;
  close(): Promise<void>;
}

async function startHost(embedPackage: () => string): Promise<Host> {
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://host');
    if (url.pathname === '/embed.js') {
      response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
      return response.end(embedPackage());
    }
    if (url.pathname !== '/host.html') {
      response.writeHead(404);
      return response.end();
    }
    const link = JSON.stringify(url.searchParams.get('link') ?? '');
    const mount = url.searchParams.has('element')
      ? `defineSigneryElement();
         const element = document.createElement('signery-signing');
         for (const type of ['ready', 'signed', 'rejected', 'delegated', 'executed', 'error'])
           element.addEventListener('signery:' + type, (event) => window.signeryEvents.push(event.detail));
         element.setAttribute('src', ${link});
         document.getElementById('signing').append(element);`
      : `mountSignery(document.getElementById('signing'), { url: ${link}, onEvent: (event) => window.signeryEvents.push(event) });`;
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Acme portal</title></head>
<body><main><h1>Acme portal: your contract</h1><div id="signing" style="height: 700px"></div></main>
<script type="module">
window.signeryEvents = [];
window.messages = [];
window.addEventListener('message', (event) => window.messages.push({ origin: event.origin, data: event.data }));
import { mountSignery, defineSigneryElement } from '/embed.js';
${mount}
</script></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://localhost:${port}`;
  return {
    origin,
    page: (link, options = {}) =>
      `${origin}/host.html?link=${encodeURIComponent(link)}${options.element ? '&element' : ''}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface Received {
  type: string;
  documentId: string | null;
  shareId: string | null;
  code?: string;
  message?: string;
}

const eventsOf = (s: Session) => s.page.evaluate<Received[]>('window.signeryEvents');
const messagesOf = (s: Session) => s.page.evaluate<{ origin: string; data: unknown }[]>('window.messages');

/** Waits until the host has received an event of `type`; answers every event so far. */
async function waitForEvent(s: Session, type: string): Promise<Received[]> {
  await s.page.waitForFunction(
    `window.signeryEvents && window.signeryEvents.some((e) => e.type === ${JSON.stringify(type)})`,
  );
  return eventsOf(s);
}

/** The framed signer page (a cross-origin frame of the host page). */
async function signerFrame(s: Session, server: { url: string }): Promise<Frame> {
  for (let i = 0; i < 200; i++) {
    const frame = s.page.frames().find((f) => f.url().startsWith(`${server.url}/s/`));
    if (frame) return frame;
    await s.page.waitForTimeout(50);
  }
  throw new Error('the signer page was never framed');
}

/** axe-core (WCAG 2.2 A/AA) inside the framed page, through the DevTools protocol (its CSP stays). */
async function checkFrameAccessibility(s: Session, frame: Frame, step: string): Promise<void> {
  const violations = await frame.evaluate<{ id: string; targets: string }[]>(
    `(async () => { if (!window.axe) { ${AXE_SOURCE}\n }
      const result = await axe.run(document, { iframes: false, runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] } });
      return result.violations.map((v) => ({ id: v.id, targets: v.nodes.map((n) => n.target.join(' ')).join(', ') })); })()`,
  );
  for (const v of violations) s.problems.push(`axe in the frame, ${step}: ${v.id} at ${v.targets}`);
}

/**
 * Chromium logs that it skipped a dialog's initial focus in a frame of another site; the page then
 * focuses the dialog's first control itself (dialogs.ts), which `expectFrameFocus` checks.
 */
function forgiveBlockedAutofocus(s: Session): void {
  const kept = s.problems.filter(
    (p) => !/Blocked autofocusing on a <\w+> element in a cross-origin subframe/.test(p),
  );
  s.problems.splice(0, s.problems.length, ...kept);
}

/** The framed page's focused element, as a tag name and its label's text. */
async function expectFrameFocus(frame: Frame, expected: RegExp): Promise<void> {
  const focused = () =>
    frame.evaluate<string>(
      `(() => { const e = document.activeElement; return e ? e.tagName.toLowerCase() + ':' + ((e.labels && e.labels[0] && e.labels[0].textContent) || e.getAttribute('aria-label') || e.textContent || '').trim() : ''; })()`,
    );
  let last = '';
  for (let i = 0; i < 40; i++) {
    last = await focused();
    if (expected.test(last)) return;
    await frame.waitForTimeout(50);
  }
  assert.match(last, expected, 'focus in the framed page');
}

const lines = ['This agreement is made between the parties named below.', 'Signed in good faith.'];

describe('EMBED_ALLOWED_ORIGINS: the sites that may frame the signer’s page', () => {
  it('takes comma-separated origins, normalised; unset or empty, none', () => {
    assert.deepEqual(loadConfig({}).embedAllowedOrigins, []);
    assert.deepEqual(loadConfig({ EMBED_ALLOWED_ORIGINS: '' }).embedAllowedOrigins, []);
    assert.deepEqual(
      loadConfig({
        EMBED_ALLOWED_ORIGINS: 'https://App.Example.com, http://localhost:5173,https://app.example.com:443',
      }).embedAllowedOrigins,
      ['https://app.example.com', 'http://localhost:5173'],
    );
  });

  it('refuses paths, wildcards, other schemes and anything not an origin, naming the setting and the entry', () => {
    for (const bad of [
      'https://app.example.com/embed',
      'https://*.example.com',
      '*',
      'app.example.com',
      'ftp://app.example.com',
      'https://app.example.com?x=1',
      'https://user@app.example.com',
      "https://app.example.com'",
      'https://app.example.com:99999',
      'https://ok.example.com, https://bad.example.com/path',
    ]) {
      assert.throws(
        () => loadConfig({ EMBED_ALLOWED_ORIGINS: bad }),
        (error: unknown) =>
          error instanceof ConfigError && /^EMBED_ALLOWED_ORIGINS must list origins/.test(error.message),
        bad,
      );
    }
  });

  it('an invalid value: the server refuses to start, with a clear message', () => {
    const started = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'main.ts')], {
      env: {
        ...process.env,
        EMBED_ALLOWED_ORIGINS: 'https://*.example.com',
        PORT: '0',
        DATA_DIR: '/nonexistent',
      },
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(started.status, 1, started.stderr);
    assert.match(started.stderr, /Configuration error: EMBED_ALLOWED_ORIGINS must list origins/);
  });
});

describe('embedded signing (issue 40, 9): a host on another origin frames the share link', () => {
  before(() => ensureBuiltPage());
  const host = useStarted(
    'the allowed host',
    () => startHost(builtEmbedPackage),
    (h) => h.close(),
  );
  const stranger = useStarted(
    'a host not allowed',
    () => startHost(builtEmbedPackage),
    (h) => h.close(),
  );
  const server = useServer(() => ({ smtp: true, env: { EMBED_ALLOWED_ORIGINS: host.origin } }));
  let owner: string;
  before(async () => {
    owner = (await aUser(server, OWNER)).token;
  });
  const aShareWith = (title: string, email: string, recipient: Record<string, unknown> = {}) =>
    anExternalShare(server, owner, { title, pdf: { pages: 1, lines }, email, recipient });
  const shareIdOf = async (token: string): Promise<string> =>
    (await server.api('GET', '/share/document', { token })).body.results[0].share.shareId as string;

  describe('headers: only the signer page’s addresses may be framed, and only by the listed sites', () => {
    it('/s/…, /sign and /sign/:id: frame-ancestors ’self’ and the listed origins, no X-Frame-Options; the page is told the list', async () => {
      const { link } = await aShareWith('Framed', 'fay@example.org');
      for (const path of [
        `/s/${link}`,
        '/s/shr_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        '/s/not-a-link',
        '/sign',
        '/sign/3f1c0b5e-0000-4000-8000-000000000000',
      ]) {
        const response = await fetch(`${server.url}${path}`);
        const csp = response.headers.get('content-security-policy') ?? '';
        assert.match(csp, new RegExp(`frame-ancestors 'self' ${host.origin}(;|$)`), path);
        assert.doesNotMatch(csp, /frame-ancestors 'none'/, path);
        assert.equal(response.headers.get('x-frame-options'), null, path);
        assert.equal(response.headers.get('referrer-policy'), 'no-referrer', path);
        const html = await response.text();
        assert.match(html, new RegExp(`<meta name="signery-embed-origins" content="${host.origin}">`), path);
        assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, `${path}: no inline script`);
      }
    });

    it('every other answer still forbids framing: the home and verification pages, the API, its reference, errors and files', async () => {
      const id = await aDocument(server, owner, { title: 'A file', pdf: { pages: 1, lines } });
      const doc = (await server.api('GET', `/documents/${id}`, { token: owner })).body.results[0];
      for (const [path, headers] of [
        ['/', {}],
        ['/verify', {}],
        ['/api/v1/openapi.json', {}],
        ['/api/v1/docs', {}],
        ['/api/v1/documents', {}],
        ['/api/v1/nope', {}],
        [`/api/v1/files/loadFile/hash/${doc.pdfFile.content}`, { authorization: `Bearer ${owner}` }],
      ] as const) {
        const response = await fetch(`${server.url}${path}`, { headers });
        const csp = response.headers.get('content-security-policy') ?? '';
        assert.match(csp, /frame-ancestors 'none'|sandbox/, `${path}: ${csp}`);
        assert.doesNotMatch(csp, new RegExp(host.origin), path);
        if (/^text\/html/.test(response.headers.get('content-type') ?? ''))
          assert.doesNotMatch(await response.text(), /signery-embed-origins/, path);
      }
    });
  });

  describe(
    'in headless Chromium',
    { skip: hasChromium ? false : 'Debian’s chromium is not installed at /usr/bin/chromium' },
    () => {
      let browser: Browser;
      before(async () => {
        browser = await launchChromium();
      });
      after(async () => {
        await browser?.close();
      });

      it('the host receives signery:ready when the document shows, then signery:signed after signing in the frame; from the Signery origin, with no token', async () => {
        const { id, link } = await aShareWith('Embedded agreement', 'ella@example.org');
        const shareId = await shareIdOf(link);
        await inSession(browser, 'embed-sign', 'desktop', async (s) => {
          await s.page.goto(host.page(`${server.url}/s/${link}`));
          const frame = await signerFrame(s, server);
          await frame.getByRole('heading', { name: 'Embedded agreement' }).waitFor();
          await frame.locator('.page[data-rendered]').first().waitFor();
          assert.deepEqual(await waitForEvent(s, 'ready'), [{ type: 'ready', documentId: id, shareId }]);
          await checkFrameAccessibility(s, frame, 'opened');
          await s.capture('framed', { axe: false });

          // The recipient signs inside the frame, as on the page itself: the field, a drawing, Sign.
          await frame
            .getByRole('button', { name: /^Signature, required/ })
            .first()
            .click();
          const pad = frame.getByRole('img', { name: /Drawing area/ });
          await pad.waitFor();
          await expectFrameFocus(frame, /^button:Draw$/);
          await checkFrameAccessibility(s, frame, 'signature dialog');
          const box = await pad.boundingBox();
          assert.ok(box);
          await s.draw(box, 'mouse');
          await frame.getByRole('button', { name: 'Use it' }).click();
          await frame
            .getByRole('button', { name: /^Signature, done/ })
            .first()
            .waitFor();
          // The consent before signing (issue 40).
          await frame
            .getByRole('checkbox', { name: 'I have read this statement and I agree to sign electronically.' })
            .check();
          await frame.getByRole('button', { name: 'Sign the document' }).click();
          await frame.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
          const events = await waitForEvent(s, 'signed');
          assert.deepEqual(events, [
            { type: 'ready', documentId: id, shareId },
            { type: 'signed', documentId: id, shareId },
          ]);
          await checkFrameAccessibility(s, frame, 'signed');
          await s.capture('signed-in-frame', { axe: false });

          // Every message the host window received came from the Signery origin, and none carries a secret.
          const messages = await messagesOf(s);
          assert.equal(messages.length, 2);
          for (const m of messages) assert.equal(m.origin, server.url);
          assert.doesNotMatch(JSON.stringify(messages), /shr_|shs_|token/i);
          forgiveBlockedAutofocus(s);
        });
        const state = (await server.api('GET', `/documents/${id}`, { token: owner })).body.results[0];
        assert.equal(state.workflow.shareStateName, 'completed');
      });

      it('rejecting in the frame: signery:rejected, through the <signery-signing> web component’s DOM events', async () => {
        const { id, link } = await aShareWith('Embedded offer', 'rob@example.org');
        const shareId = await shareIdOf(link);
        await inSession(browser, 'embed-reject', 'phone', async (s) => {
          await s.page.goto(host.page(`${server.url}/s/${link}`, { element: true }));
          const frame = await signerFrame(s, server);
          await waitForEvent(s, 'ready');
          assert.equal(await s.page.locator('signery-signing iframe[title="Document to sign"]').count(), 1);
          await frame.getByRole('button', { name: 'Reject' }).click();
          await expectFrameFocus(frame, /^textarea:Reason/);
          await frame.getByLabel('Reason (the sender will read it)').fill('Not for us');
          await frame.getByRole('button', { name: 'Reject the document' }).click();
          await frame.getByRole('heading', { name: 'This document was rejected' }).waitFor();
          assert.deepEqual(await waitForEvent(s, 'rejected'), [
            { type: 'ready', documentId: id, shareId },
            { type: 'rejected', documentId: id, shareId },
          ]);
          await checkFrameAccessibility(s, frame, 'rejected');
          await s.capture('rejected-in-frame', { axe: false });
          forgiveBlockedAutofocus(s);
        });
      });

      it('delegating in the frame: signery:delegated', async () => {
        const { id, link } = await aShareWith('Embedded hand-on', 'dina@example.org', {
          rights: ['delegate'],
        });
        const shareId = await shareIdOf(link);
        await inSession(browser, 'embed-delegate', 'desktop', async (s) => {
          await s.page.goto(host.page(`${server.url}/s/${link}`));
          const frame = await signerFrame(s, server);
          await waitForEvent(s, 'ready');
          await frame.getByRole('button', { name: 'Delegate' }).click();
          await expectFrameFocus(frame, /^input:Their e-mail address/);
          await frame.getByLabel('Their e-mail address').fill('deputy@example.org');
          await frame.getByRole('button', { name: 'Delegate' }).last().click();
          await frame.getByText('The request was passed on to deputy@example.org.').waitFor();
          const events = await waitForEvent(s, 'delegated');
          assert.deepEqual(events, [
            { type: 'ready', documentId: id, shareId },
            { type: 'delegated', documentId: id, shareId },
          ]);
          // The delegate's address is the recipient's business, not the host's.
          assert.doesNotMatch(JSON.stringify(await messagesOf(s)), /deputy@/);
          forgiveBlockedAutofocus(s);
        });
      });

      it('approving in the frame: signery:executed, then the link is answered and says so (signery:error ALREADY_RESPONDED)', async () => {
        const { id, link } = await aShareWith('Embedded approval', 'abe@example.org', {
          sharePurpose: 'approve',
        });
        const shareId = await shareIdOf(link);
        await inSession(browser, 'embed-approve', 'desktop', async (s) => {
          await s.page.goto(host.page(`${server.url}/s/${link}`));
          const frame = await signerFrame(s, server);
          await waitForEvent(s, 'ready');
          await frame.getByRole('button', { name: 'Approve' }).click();
          await frame.getByText('Thank you: your answer was recorded.').waitFor();
          assert.deepEqual(await waitForEvent(s, 'executed'), [
            { type: 'ready', documentId: id, shareId },
            { type: 'executed', documentId: id, shareId },
          ]);
          // Opened again, the link is a page saying it was answered: the host hears why nothing shows.
          await s.page.reload();
          const again = await signerFrame(s, server);
          await again.getByRole('heading', { name: 'You have already responded' }).waitFor();
          const events = await waitForEvent(s, 'error');
          assert.equal(events.length, 1);
          assert.equal(events[0]?.code, 'ALREADY_RESPONDED');
          await checkFrameAccessibility(s, again, 'already responded');
        });
      });

      it('a password-protected share in the frame: unlocked there with no cookie; the recipient session stays in the frame’s storage when the browser gives a third-party frame any, else in memory (a reload asks again)', async () => {
        const { id, link, shares } = await aShareWith('Embedded protected', 'pat@example.org', {
          password: 'correct horse',
        });
        const shareId = shares[0].shareId as string;
        const unlock = async (frame: Frame) => {
          await frame.getByLabel('Password').fill('correct horse');
          await frame.getByRole('button', { name: 'Open the document' }).click();
          await frame.getByRole('heading', { name: 'Embedded protected' }).waitFor();
          await frame.locator('.page[data-rendered]').first().waitFor();
        };
        await inSession(browser, 'embed-protected', 'phone', async (s) => {
          await s.page.goto(host.page(`${server.url}/s/${link}`));
          let frame = await signerFrame(s, server);
          await frame.getByLabel('Password').waitFor();
          await checkFrameAccessibility(s, frame, 'locked');
          assert.deepEqual(await eventsOf(s), [], 'nothing is shown yet: no ready');
          await unlock(frame);
          assert.deepEqual(await waitForEvent(s, 'ready'), [{ type: 'ready', documentId: id, shareId }]);
          // Debian's Chromium gives a frame of another site no storage at all (third-party storage is
          // blocked, and partitioned storage is off under playwright); browsers that partition it
          // give the frame a sessionStorage of its own, for this host and this tab.
          const kept = await frame.evaluate<{ session: string | null; cookies: string }>(
            `(() => { let session = null; try { session = sessionStorage.getItem('signery.recipientSession') ?? ''; } catch {} return { session, cookies: document.cookie }; })()`,
          );
          assert.equal(kept.cookies, '', 'nothing cookie-based');
          if (kept.session !== null) assert.match(kept.session, /"token":"shs_/);
          assert.doesNotMatch(JSON.stringify(await messagesOf(s)), /shs_|shr_/);

          await s.page.reload();
          frame = await signerFrame(s, server);
          if (kept.session === null) {
            // No storage: the session lived in the frame's memory only; the password is asked again.
            await frame.getByLabel('Password').waitFor();
            await unlock(frame);
          } else {
            await frame.getByRole('heading', { name: 'Embedded protected' }).waitFor();
          }
          assert.deepEqual(await waitForEvent(s, 'ready'), [{ type: 'ready', documentId: id, shareId }]);
        });
      });

      it('a link that opens nothing (an ended share, a mistyped link): signery:error with its code, and the page says so in the frame', async () => {
        const { id: cancelled, link: ended } = await aShareWith('Withdrawn', 'wes@example.org');
        const cancel = await server.api('POST', '/share/cancel', { token: owner, body: { id: cancelled } });
        assert.equal(cancel.status, 200, cancel.text);
        for (const [token, code, heading] of [
          [ended, 'LINK_ENDED', 'This link has ended'],
          ['shr_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'LINK_UNKNOWN', 'This link does not work'],
        ] as const) {
          await inSession(browser, `embed-error-${code}`, 'phone', async (s) => {
            await s.page.goto(host.page(`${server.url}/s/${token}`));
            const frame = await signerFrame(s, server);
            await frame.getByRole('heading', { name: heading }).waitFor();
            assert.deepEqual(await waitForEvent(s, 'error'), [
              { type: 'error', documentId: null, shareId: null, code, message: heading },
            ]);
            await checkFrameAccessibility(s, frame, code);
            await s.capture(`error-${code}`, { axe: false });
          });
        }
      });

      it('a host not in EMBED_ALLOWED_ORIGINS cannot frame the page (Chromium refuses it) and receives no message', async () => {
        const { link } = await aShareWith('Not for strangers', 'sam@example.org');
        const s = await Session.open(browser, 'embed-stranger', 'desktop');
        try {
          await s.page.goto(stranger.page(`${server.url}/s/${link}`));
          await s.page.locator('iframe').waitFor();
          await s.page.waitForTimeout(2_000);
          const frame = s.page.frames().find((f) => f !== s.page.mainFrame());
          const shown = frame ? await frame.evaluate('document.title').catch(() => 'blocked') : 'no frame';
          assert.notEqual(shown, 'Signery', 'the signer page did not load in the frame');
          assert.deepEqual(await eventsOf(s), []);
          assert.deepEqual(await messagesOf(s), []);
          assert.ok(
            s.problems.some((p) => /frame-ancestors/.test(p)),
            `Chromium reports the refusal: ${s.problems.join('; ')}`,
          );
        } finally {
          await s.close();
        }
      });

      it('not framed, the page posts nothing (the signer opens the link itself)', async () => {
        const { link } = await aShareWith('Opened directly', 'otto@example.org');
        await inSession(browser, 'embed-not-framed', 'desktop', async (s) => {
          await s.page.addInitScript(
            'window.__posted = []; const post = window.postMessage.bind(window); window.postMessage = (...a) => { window.__posted.push(a); return post(...a); };',
          );
          await s.page.goto(`${server.url}/s/${link}`);
          await s.page.getByRole('heading', { name: 'Opened directly' }).waitFor();
          await s.page.locator('.page[data-rendered]').first().waitFor();
          assert.deepEqual(await s.page.evaluate('window.__posted'), []);
        });
      });
    },
  );
});

describe('without EMBED_ALLOWED_ORIGINS (the default), no site frames the signer’s page', () => {
  before(() => ensureBuiltPage());
  const host = useStarted(
    'a host',
    () => startHost(builtEmbedPackage),
    (h) => h.close(),
  );
  const server = useServer({ smtp: true });
  let owner: string;
  before(async () => {
    owner = (await aUser(server, OWNER)).token;
  });

  it('the page answers frame-ancestors ’none’ and X-Frame-Options DENY, and names no embedder', async () => {
    for (const path of ['/s/shr_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '/sign', '/', '/verify']) {
      const response = await fetch(`${server.url}${path}`);
      assert.match(response.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, path);
      if (path !== '/verify' && path !== '/')
        assert.equal(response.headers.get('x-frame-options'), 'DENY', path);
      assert.doesNotMatch(await response.text(), /signery-embed-origins|link-events/, path);
    }
  });

  it(
    'Chromium refuses to frame it',
    { skip: hasChromium ? false : 'Debian’s chromium is not installed at /usr/bin/chromium' },
    async () => {
      const { link } = await anExternalShare(server, owner, {
        title: 'Unframed',
        pdf: { pages: 1, lines },
        email: 'una@example.org',
      });
      const browser = await launchChromium();
      try {
        const s = await Session.open(browser, 'embed-refused', 'desktop');
        try {
          await s.page.goto(host.page(`${server.url}/s/${link}`));
          await s.page.waitForTimeout(2_000);
          assert.ok(
            s.problems.some((p) => /frame-ancestors|X-Frame-Options/.test(p)),
            `Chromium reports the refusal: ${s.problems.join('; ')}`,
          );
          const frame = s.page.frames().find((f) => f !== s.page.mainFrame());
          const shown = frame ? await frame.evaluate('document.title').catch(() => 'blocked') : 'no frame';
          assert.notEqual(shown, 'Signery');
        } finally {
          await s.close();
        }
      } finally {
        await browser.close();
      }
    },
  );
});
