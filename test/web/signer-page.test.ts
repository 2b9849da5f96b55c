import assert from 'node:assert/strict';
import { get as httpGet, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { Browser, Download, Request } from 'playwright-core';
import { ManualClock } from '../../src/base/clock.js';
import { SIGNER_PAGE_CSP } from '../../src/http/routes/signer-page.js';
import { shareMail } from '../../src/notify/mail/share-mail.js';
import { LANGUAGES } from '../../web/src/i18n.js';
import { startIdentityProvider } from '../helpers/oidc.js';
import { aDocument, readDocument, writeMainFile } from '../helpers/documents.js';
import { makePdf } from '../helpers/pdf.js';
import { aUser, OWNER, someUsers } from '../helpers/people.js';
import {
  anExternalShare,
  linkOf,
  previewAheadJob,
  shareDocument,
  signByLink,
  smsCodeTo,
} from '../helpers/sharing.js';
import { decode } from '../helpers/smtp.js';
import { mustSucceed } from '../helpers/server.js';
import { useServer, useStarted } from '../helpers/use-server.js';
import { assertSignaturesValid, pdfsig, tool, useWorkspace } from '../pdf/oracles.js';
import { ensureBuiltPage, hasChromium, inSession, launchChromium, type Session } from './browser.js';
import { startProxy } from './proxy.js';

describe('the signer’s page (PUBLIC_URL/s/<token>, /sign), served by the API server', () => {
  const clock = new ManualClock(new Date());
  const logLines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  before(() => ensureBuiltPage());
  // PUBLIC_URL is a proxy in front of the server: the identity provider registers its callback under
  // it before the server (and its port) exists. Links that go through a provider open there.
  const proxy = useStarted('the proxy', startProxy, (started) => started.close());
  const idp = useStarted(
    'the identity provider',
    () =>
      startIdentityProvider({
        redirectUris: [`${proxy.url}/api/v1/share/oidc/corp/callback`],
        accounts: [
          { id: 'olga', email: 'olga@example.org', emailVerified: true },
          { id: 'kurt', email: 'kurt@example.org', emailVerified: true },
          { id: 'mallory', email: 'mallory@example.org', emailVerified: true },
        ],
      }),
    (started) => started.close(),
  );
  const server = useServer(() => ({
    smtp: true,
    clock,
    env: {
      PUBLIC_URL: proxy.url,
      OIDC_PROVIDERS: JSON.stringify([idp.entry('corp', { label: 'Corporate login' })]),
    },
    logger: { level: 'info', stream },
  }));
  const smtp = server.smtp;
  const space = useWorkspace();
  let owner: string;
  before(async () => {
    proxy.target = server.url;
    owner = (await aUser(server, OWNER)).token;
    await someUsers(server, [
      { name: 'ivy', email: 'ivy@example.test', displayName: 'Ivy Internal' },
      { name: 'jon', email: 'jon@example.test', displayName: 'Jon Schmidt' },
    ]);
    // The choices of select fields that name this enum (issue 25).
    const countries = {
      name: 'countries',
      records: [
        { value: 'DE', label: 'Germany' },
        { value: 'FR', label: 'France' },
      ],
    };
    mustSucceed(await server.api('POST', '/enums', { token: owner, body: countries }), 'POST /enums');
  });

  const lines = ['This agreement is made between the parties named below.', 'Signed in good faith.'];
  const newDoc = (title: string, pages = 2) => aDocument(server, owner, { title, pdf: { pages, lines } });
  /** A document shared with one signer by e-mail address, and the link from their invitation. */
  const aShareWith = (title: string, email: string, recipient: Record<string, unknown> = {}, pages = 2) =>
    anExternalShare(server, owner, { title, pdf: { pages, lines }, email, recipient });

  const ownerView = (id: string) => readDocument(server, owner, id);
  const link = (token: string) => `${server.url}/s/${token}`;
  /** The link as the e-mail has it (PUBLIC_URL): identity providers send the browser back there. */
  const publicLink = (token: string) => `${proxy.url}/s/${token}`;

  async function assertSignedPdf(download: Download, signatures: number): Promise<void> {
    const path = join(space.dir, `${Date.now()}-${download.suggestedFilename()}`);
    await download.saveAs(path);
    await assertSignedFile(path, signatures);
  }
  /**
   * A protected share's recipient session ends with the share (Contract), so its page cannot download
   * the signed PDF afterwards: the owner reads it instead.
   */
  async function assertOwnerGetsSignedPdf(id: string, signatures: number): Promise<void> {
    await assertSignedFile(await writeMainFile(server, owner, id, space), signatures);
  }
  const assertSignedFile = (path: string, signatures: number) => assertSignaturesValid(path, signatures);

  describe('served from the same origin with a strict Content-Security-Policy', () => {
    it('GET /s/:token, /sign and /sign/:id answer the page with the CSP, no-referrer and no-store; nothing inline', async () => {
      for (const path of ['/s/shr_not-a-real-token', '/sign', '/sign/3f1c0b5e-0000-4000-8000-000000000000']) {
        const response = await fetch(`${server.url}${path}`);
        // A link that names no share is a page saying so (issue 37 item 9), with the same headers.
        assert.equal(response.status, path.startsWith('/s/') ? 404 : 200, path);
        assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
        assert.equal(response.headers.get('content-security-policy'), SIGNER_PAGE_CSP);
        assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
        assert.equal(response.headers.get('cache-control'), 'no-store');
        assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
        const html = await response.text();
        assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
        assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i, 'no inline style or handler');
        assert.doesNotMatch(html, /shr_not-a-real-token/, 'the token is not echoed into the page');
      }
      assert.match(SIGNER_PAGE_CSP, /default-src 'self'/);
      assert.doesNotMatch(SIGNER_PAGE_CSP, /unsafe-inline|unsafe-eval|\*/);
    });

    it('assets have hashed names and a year of cache; unknown names are the Contract’s 404', async () => {
      const html = await (await fetch(`${server.url}/sign`)).text();
      const script = /<script[^>]*src="([^"]+)"/.exec(html)?.[1] ?? '';
      assert.match(script, /^\/web\/assets\/index-[\w-]{8}\.js$/);
      const asset = await fetch(`${server.url}${script}`);
      assert.equal(asset.status, 200);
      assert.match(asset.headers.get('content-type') ?? '', /^text\/javascript/);
      assert.equal(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      for (const path of ['/web/assets/nope.js', '/web/assets/..%2F..%2Fpackage.json']) {
        const missing = await fetch(`${server.url}${path}`);
        assert.equal(missing.status, 404, path);
        const body = (await missing.json()) as Record<string, unknown>;
        assert.deepEqual(Object.keys(body).sort(), ['code', 'error', 'message', 'statusCode']);
        assert.equal(body.code, 'NOT_FOUND');
      }
    });

    it('assets go out compressed when the browser takes it: brotli first, else gzip, byte for byte the same once decompressed (issue 25)', async () => {
      const html = await (await fetch(`${server.url}/sign`)).text();
      const script = /<script[^>]*src="([^"]+)"/.exec(html)?.[1] ?? '';
      const get = (acceptEncoding?: string) =>
        new Promise<{ headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
          const request = httpGet(
            `${server.url}${script}`,
            { headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } },
            (response) => {
              const chunks: Buffer[] = [];
              response.on('data', (chunk: Buffer) => chunks.push(chunk));
              response.on('end', () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
            },
          );
          request.on('error', reject);
        });
      const plain = await get();
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.equal(plain.headers.vary, 'accept-encoding');
      const br = await get('gzip, deflate, br');
      assert.equal(br.headers['content-encoding'], 'br');
      assert.equal(Number(br.headers['content-length']), br.body.length);
      assert.ok(br.body.length < plain.body.length / 2, `${br.body.length} of ${plain.body.length} bytes`);
      assert.equal(Buffer.compare(brotliDecompressSync(br.body), plain.body), 0);
      const gz = await get('gzip, br;q=0');
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.equal(Buffer.compare(gunzipSync(gz.body), plain.body), 0);
      assert.equal((await get('identity')).headers['content-encoding'], undefined);
    });

    it('the share token reads its document’s files through GET /files/loadFile/hash (DESIGN Contract; the page needs it), nothing else', async () => {
      const { link: token } = await aShareWith('Readable', 'reader@example.org');
      const doc = (await server.api('GET', '/share/document', { token })).body.results[0];
      const file = await fetch(`${server.url}/api/v1/files/loadFile/hash/${doc.pdfFile.content}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(file.status, 200, await file.text());
      assert.equal(file.headers.get('content-type'), 'application/pdf');
      // Another document's file does not exist for this link.
      const other = (await server.api('GET', `/documents/${await newDoc('Not shared')}`, { token: owner }))
        .body.results[0];
      const foreign = await fetch(`${server.url}/api/v1/files/loadFile/hash/${other.pdfFile.content}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(foreign.status, 404);
    });

    it('speaks the share e-mails’ languages (en, de, fr) and no other', () => {
      const subject = (language: string) =>
        shareMail({ kind: 'invitation', to: 'a@example.org', language, documentTitle: 'T', from: 'x' })
          .subject;
      const english = subject('en');
      assert.deepEqual(Object.keys(LANGUAGES).sort(), ['de', 'en', 'fr']);
      for (const language of Object.keys(LANGUAGES))
        if (language !== 'en') assert.notEqual(subject(language), english, `mail has ${language}`);
      for (const language of ['es', 'it', 'nl', 'pt', 'pl'])
        assert.equal(subject(language), english, `the mails have ${language}: add it to the page`);
    });
  });

  describe(
    'in headless Chromium (Debian’s chromium driven by playwright-core)',
    {
      skip: hasChromium
        ? false
        : 'Debian’s chromium is not installed at /usr/bin/chromium (apt-get install chromium): browser tests skipped',
    },
    () => {
      let browser: Browser;
      before(async () => {
        browser = await launchChromium();
      });
      after(async () => {
        await browser?.close();
        const log = logLines.join('');
        assert.doesNotMatch(log, /shr_[A-Za-z0-9_-]{20}/, 'no share token in the server’s logs');
        assert.doesNotMatch(log, /shs_[A-Za-z0-9_-]{20}/, 'no recipient session in the server’s logs');
      });

      /** Waits for the PDF: fails at once with the page's message when it could not be shown. */
      async function waitForPdf(s: Session): Promise<void> {
        const viewer = s.page.locator('.viewer[data-state="ready"], .viewer[data-state="failed"]');
        await viewer.waitFor();
        if ((await viewer.getAttribute('data-state')) === 'failed')
          throw new Error(await s.page.locator('.viewer [role="alert"]').innerText());
        await s.page.locator('.page[data-rendered]').first().waitFor();
      }

      async function download(s: Session, start: () => Promise<void>): Promise<Download> {
        const [file] = await Promise.all([s.page.waitForEvent('download'), start()]);
        return file;
      }

      /** Pointer flow: open the signature dialog from the field, draw, use it. */
      async function drawSignature(s: Session, kind: 'mouse' | 'touch' | 'pen'): Promise<void> {
        await s.page
          .getByRole('button', { name: /^Signature, required/ })
          .first()
          .click();
        const pad = s.page.getByRole('img', { name: /Drawing area/ });
        await pad.waitFor();
        await s.capture('signature-dialog');
        const box = await pad.boundingBox();
        assert.ok(box);
        await s.draw(box, kind);
        await s.capture(`drawn-with-${kind}`);
        await s.page.getByRole('button', { name: 'Use it' }).click();
        await s.page
          .getByRole('button', { name: /^Signature, done/ })
          .first()
          .waitFor();
      }

      /** Keyboard flow: Next field, nudge the box, Enter, type a name (the dialog opens on Type), Enter. */
      async function typeSignature(s: Session, name: string): Promise<void> {
        await s.tabTo(/^Next field$/);
        await s.page.keyboard.press('Enter');
        await s.expectFocus(/^Signature, required/);
        for (let i = 0; i < 5; i++) await s.page.keyboard.press('ArrowUp');
        await s.page.keyboard.press('Enter');
        await s.page.getByRole('tab', { name: 'Type', selected: true }).waitFor();
        await s.expectFocus('Your full name');
        await s.page.keyboard.type(name);
        await s.capture('signature-typed');
        await s.page.keyboard.press('Enter');
        await s.page.getByRole('button', { name: /^Signature, done/ }).waitFor();
        await agreeByKeyboard(s); // focus moves on to the consent, then the sign button
      }

      /**
       * The consent before signing (issue 40): focus is on its box once the fields are done; Space
       * ticks it and Tab reaches the sign button.
       */
      async function agreeByKeyboard(
        s: Session,
        box = 'I have read this statement and I agree to sign electronically.',
        sign = 'Sign the document',
      ): Promise<void> {
        await s.expectFocus(box);
        await s.page.keyboard.press('Space');
        await s.page.keyboard.press('Tab');
        await s.expectFocus(sign);
      }

      /** The consent before signing (issue 40), ticked with the pointer. */
      const agree = (s: Session) =>
        s.page
          .getByRole('checkbox', { name: 'I have read this statement and I agree to sign electronically.' })
          .check();

      it('signing from the e-mail link with a finger on a phone: the field, the drawing, sign, download (pdfsig: valid)', async () => {
        const { id, link: token } = await aShareWith('Service agreement', 'anna@example.org');
        await inSession(browser, 'sign-pointer', 'phone', async (s) => {
          await s.page.goto(link(token));
          await s.page.getByRole('heading', { name: 'Service agreement' }).waitFor();
          await waitForPdf(s);
          await s.capture('opened');
          await drawSignature(s, 'touch');
          await s.capture('signature-placed');
          await agree(s);
          await s.page.getByRole('button', { name: 'Sign the document' }).click();
          await s.page.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
          await s.capture('signed');
          const file = await download(s, () =>
            s.page.getByRole('button', { name: 'Download the signed PDF' }).click(),
          );
          await assertSignedPdf(file, 2);
          assert.equal((await ownerView(id)).workflow.shareStateName, 'completed');
        });
        // The owner's "completed" mail leads to a page that works for them (issue 25, 4): signed in,
        // they see the completed document and download it.
        const mail = decode((await smtp.waitFor('owner@example.test', /Service agreement/)).raw);
        const sent = /https?:\/\/[^\s"<>]+\/sign\/[0-9a-f-]{36}/.exec(mail)?.[0];
        assert.equal(sent, `${proxy.url}/sign/${id}`, 'the mail links the document on the signer page');
        await inSession(browser, 'owner-completed-mail', 'desktop', async (o) => {
          await o.page.goto(sent);
          await o.page.getByRole('heading', { name: 'Sign in' }).waitFor();
          await o.page.getByLabel('User name').fill('owner');
          await o.page.getByLabel('Password').fill('user-password-1');
          await o.page.getByRole('button', { name: 'Sign in' }).click();
          await o.page.getByRole('heading', { name: 'Service agreement' }).waitFor();
          await waitForPdf(o);
          await o.capture('owner-opens-completed');
          const owned = await download(o, () =>
            o.page.getByRole('button', { name: 'Download the signed PDF' }).click(),
          );
          await assertSignedPdf(owned, 2);
        });
      });

      it('a new visitor sees the first page as the server drew it before the viewer’s code has come, then pdf.js draws it; a returning one needs no image (issue 25: first page on a slow phone)', async () => {
        const { id: previewed, link: token } = await aShareWith('Preview agreement', 'pia@example.org');
        // Drawn when the invitation went out, as on a server with time between the mail and the visit.
        assert.equal((await previewAheadJob(server, previewed))?.status, 'done');
        await inSession(browser, 'first-page-preview', 'phone', async (s) => {
          // The viewer's code held back, as a slow connection would: the image shows meanwhile.
          let release!: () => void;
          const held = new Promise<void>((resolve) => (release = resolve));
          const events: string[] = [];
          s.page.on('request', (r) => events.push(`request ${new URL(r.url()).pathname}`));
          s.page.on('response', (r) => events.push(`response ${new URL(r.url()).pathname}`));
          await s.page.route(/\/web\/assets\/pdf-viewer-[^/]+\.js$/, async (route) => {
            await held;
            await route.continue();
          });
          await s.page.goto(link(token));
          await s.page.getByRole('heading', { name: 'Preview agreement' }).waitFor();
          // The sharer as the invitation named them: their display name, not their login.
          await s.page.getByText('Sent by Olivia Owner').waitFor();
          const image = s.page.locator('.page-preview-image[data-shown="true"]');
          await image.waitFor();
          assert.equal(await s.page.getByRole('img', { name: /^Page 1 \(a preview/ }).count(), 1);
          const box = await image.boundingBox();
          assert.ok(
            box && box.width > 300 && box.x + box.width <= 390,
            `fits the phone: ${JSON.stringify(box)}`,
          );
          const viewerAsked = events.findIndex((e) => /^request \/web\/assets\/pdf-viewer-/.test(e));
          const imageCame = events.indexOf('response /api/v1/share/document/preview');
          assert.ok(imageCame >= 0 && (viewerAsked === -1 || viewerAsked > imageCame), events.join('\n'));
          await s.capture('first-page-preview');
          release();
          await waitForPdf(s);
          await s.page.locator('.page-preview-image').waitFor({ state: 'detached' });
          assert.equal(
            await s.page.locator('.page-preview').count(),
            0,
            'the image goes once pdf.js drew the page',
          );

          // Back later with the viewer's code in the cache (routing bypasses the cache: the first
          // visit without it fills it): the page loads the viewer at once and asks for no image.
          await s.page.unrouteAll();
          await s.page.reload();
          await waitForPdf(s);
          events.length = 0;
          await s.page.reload();
          await waitForPdf(s);
          assert.ok(!events.includes('request /api/v1/share/document/preview'), events.join('\n'));
          assert.equal(await s.page.locator('.page-preview').count(), 0);
        });
      });

      it('a first-page image slow to come holds the viewer back a few seconds at most, and never shows over the drawn page', async () => {
        const { link: token } = await aShareWith('Slow preview', 'sly@example.org');
        await inSession(browser, 'slow-preview', 'desktop', async (s) => {
          let release!: () => void;
          const held = new Promise<void>((resolve) => (release = resolve));
          await s.page.route(/\/api\/v1\/share\/document\/preview$/, async (route) => {
            await held;
            await route.continue().catch(() => undefined);
          });
          await s.page.goto(link(token));
          // The image never came: the viewer loaded anyway and drew the page.
          await waitForPdf(s);
          release();
          await sleep(500);
          assert.equal(await s.page.locator('.page-preview, .page-preview-image').count(), 0);
        });
      });

      it('zooming several times in a row renders the last zoom, with no page error (one render per canvas at a time)', async () => {
        const { link: token } = await aShareWith('Zoom test', 'zelda@example.org', {}, 3);
        await inSession(browser, 'zoom-burst', 'phone', async (s) => {
          await s.page.goto(link(token));
          await waitForPdf(s);
          // Four clicks in one task: every render request is made before any of them reaches pdf.js.
          // The suite's TypeScript has no DOM types: page code is passed as text.
          await s.page.evaluate(`(() => {
            const zoomIn = document.querySelector('button[aria-label="Zoom in"]');
            const zoomOut = document.querySelector('button[aria-label="Zoom out"]');
            if (!zoomIn || !zoomOut) throw new Error('no zoom buttons');
            zoomIn.click();
            zoomIn.click();
            zoomIn.click();
            zoomOut.click();
          })()`);
          await s.until(`document.querySelector('.viewer')?.getAttribute('data-pending') === '0'`);
          const { status, pageWidth, canvasWidth } = await s.page.evaluate<{
            status: string;
            pageWidth: number;
            canvasWidth: number;
          }>(`(() => {
            const page = document.querySelector('.page[data-page="1"]');
            const canvas = page?.querySelector('canvas');
            return {
              status: document.querySelector('.tool-status:last-of-type')?.textContent ?? '',
              pageWidth: page?.getBoundingClientRect().width ?? 0,
              canvasWidth: canvas ? Number.parseFloat(canvas.style.width) : 0,
            };
          })()`);
          assert.match(status, /^\d+%$/);
          assert.ok(
            Math.abs(pageWidth - canvasWidth) <= 1,
            `page ${pageWidth}px wide, its canvas ${canvasWidth}px`,
          );
          await s.capture('zoomed');
        });
      });

      for (const size of ['phone', 'desktop'] as const) {
        it(`every part of a page can be scrolled to at every zoom, its left edge too (${size}; issue 25, 2)`, async () => {
          const { link: token } = await aShareWith(`Wide view ${size}`, `wide-${size}@example.org`);
          await inSession(browser, `zoom-reach-${size}`, size, async (s) => {
            await s.page.goto(link(token));
            await waitForPdf(s);
            for (let zoom = 0; zoom < 6; zoom++) {
              // Scrolled as far left and up as the view goes: the page's left edge is inside it, and
              // as far right, its right edge.
              const reach = await s.page.evaluate<{ left: number; right: number; status: string }>(`(() => {
                const view = document.querySelector('.viewer-scroll');
                const page = document.querySelector('.page[data-page="1"]');
                if (!view || !page) throw new Error('no viewer');
                view.scrollLeft = 0;
                const box = view.getBoundingClientRect();
                const left = page.getBoundingClientRect().left - box.left;
                view.scrollLeft = view.scrollWidth;
                const right = box.right - page.getBoundingClientRect().right;
                view.scrollLeft = 0;
                return { left, right, status: document.querySelector('.tool-status:last-of-type')?.textContent ?? '' };
              })()`);
              assert.ok(
                reach.left >= 0,
                `at ${reach.status}: the left edge is ${-reach.left}px out of reach`,
              );
              assert.ok(
                reach.right >= -1,
                `at ${reach.status}: the right edge is ${-reach.right}px out of reach`,
              );
              await s.page.getByRole('button', { name: 'Zoom in' }).click();
              // A selector, not a function: the page's CSP allows no eval.
              await s.page.locator('.viewer[data-pending="0"]').waitFor();
            }
            await s.capture('zoomed-in-left-edge');
          });
        });
      }

      it('signing from the e-mail link with the keyboard only: Tab, arrows, Enter, typed signature (pdfsig: valid)', async () => {
        const { link: token } = await aShareWith('Keyboard agreement', 'kai@example.org');
        await inSession(browser, 'sign-keyboard', 'desktop', async (s) => {
          await s.page.goto(link(token));
          await s.page.getByRole('heading', { name: 'Keyboard agreement' }).waitFor();
          await waitForPdf(s);
          await s.capture('opened');
          await typeSignature(s, 'Kai Keyboard');
          await s.capture('signature-placed');
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
          await s.expectFocus('Thank you, you have signed'); // focus goes to the outcome
          await s.capture('signed');
          await s.tabTo(/^Download the signed PDF$/);
          const file = await download(s, () => s.page.keyboard.press('Enter'));
          await assertSignedPdf(file, 2);
        });
      });

      it('after signing, a keyboard user who moved on keeps their place when the signed PDF arrives late', async () => {
        const { link: token } = await aShareWith('Slow signed copy', 'sol@example.org');
        await inSession(browser, 'sign-slow-pdf', 'desktop', async (s) => {
          let slow = false;
          // Once signed, every PDF download takes a while: the page is usable before the new copy shows.
          await s.page.route('**/files/loadFile/hash/**', async (route) => {
            if (slow) await sleep(1_500);
            await route.continue();
          });
          await s.page.goto(link(token));
          await waitForPdf(s);
          await typeSignature(s, 'Sol Slow');
          slow = true;
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
          // The outcome has the focus as soon as it shows (not once the new copy has loaded).
          assert.equal(await s.focused(), 'Thank you, you have signed');
          await s.tabTo(/^Download the signed PDF$/);
          await waitForPdf(s);
          await s.until(`document.querySelector('.viewer')?.getAttribute('data-pending') === '0'`);
          await s.expectFocus('Download the signed PDF');
          const file = await download(s, () => s.page.keyboard.press('Enter'));
          await assertSignedPdf(file, 2);
        });
      });

      it('an error when signing shows beside the Sign button in plain words, and focus stays on the button (issue 25, 6)', async () => {
        const { link: token } = await aShareWith('Refused signature', 'erin@example.org');
        await inSession(browser, 'sign-error-pointer', 'phone', async (s) => {
          await s.page.goto(link(token));
          await s.page.getByRole('heading', { name: 'Refused signature' }).waitFor();
          await waitForPdf(s);
          await drawSignature(s, 'touch');
          // The server refuses what arrives: a signature on a page the PDF does not have (the real
          // server's own validation answer, to a request changed on its way).
          await s.page.route('**/share/document/sign/**', async (route) => {
            const body = JSON.parse(route.request().postData() ?? '{}') as {
              signatures?: { pages?: number[] }[];
            };
            for (const signature of body.signatures ?? []) signature.pages = [99];
            await route.continue({ postData: JSON.stringify(body) });
          });
          await agree(s);
          const sign = s.page.getByRole('button', { name: 'Sign the document' });
          await sign.scrollIntoViewIfNeeded();
          await sign.focus();
          await s.page.keyboard.press('Enter');
          const alert = s.page.getByRole('alert').filter({ hasText: 'could not be accepted' });
          await alert.waitFor();
          await s.capture('sign-refused');
          assert.equal(await s.page.getByText('Request validation errors').count(), 0, 'no integrator text');
          const [alertBox, signBox] = [await alert.boundingBox(), await sign.boundingBox()];
          assert.ok(alertBox && signBox);
          const viewport = s.page.viewportSize()!;
          assert.ok(
            alertBox.y >= 0 && alertBox.y + alertBox.height <= viewport.height,
            'the error is in view',
          );
          assert.ok(signBox.y - (alertBox.y + alertBox.height) < 80, 'right above the Sign button');
          assert.equal(
            await s.page.evaluate<string>('document.activeElement?.textContent ?? ""'),
            'Sign the document',
            'focus stays where the person was',
          );
          // Nothing was signed; once the request goes through unchanged, the signature lands.
          await s.page.unroute('**/share/document/sign/**');
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
        });
      });

      it('sequential signers without placed fields: the second sees where the first signed, and their default box is elsewhere (issue 25, 3)', async () => {
        const id = await newDoc('Two in a row');
        await shareDocument(server, owner, id, {
          to: [
            { sharePurpose: 'sign', shareTo: 'first@example.org' },
            { sharePurpose: 'sign', shareTo: 'second@example.org' },
          ],
          share: { sequential: true },
        });
        const signAt = async (email: string, name: string, signedBefore: number) => {
          const token = await linkOf(smtp, email);
          await inSession(browser, name, 'desktop', async (s) => {
            await s.page.goto(link(token));
            await waitForPdf(s);
            assert.equal(
              await s.page.locator('.signed-area').count(),
              signedBefore,
              'earlier signatures shown',
            );
            const overlap = await s.page.evaluate<number>(`(() => {
              const field = document.querySelector('.field')?.getBoundingClientRect();
              let overlap = 0;
              for (const mark of document.querySelectorAll('.signed-area')) {
                const m = mark.getBoundingClientRect();
                const w = Math.min(field.right, m.right) - Math.max(field.left, m.left);
                const h = Math.min(field.bottom, m.bottom) - Math.max(field.top, m.top);
                if (w > 0 && h > 0) overlap += w * h;
              }
              return overlap;
            })()`);
            assert.equal(overlap, 0, 'the default box leaves earlier signatures free');
            await s.capture('before-signing');
            await drawSignature(s, 'mouse');
            await agree(s);
            await s.page.getByRole('button', { name: 'Sign the document' }).click();
            await s.page.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
          });
        };
        await signAt('first@example.org', 'sequential-first', 0);
        await signAt('second@example.org', 'sequential-second', 1);
        await assertOwnerGetsSignedPdf(id, 3);
      });

      it('rejecting with a reason on a phone: the document becomes rejected and the owner reads the reason', async () => {
        const { id, link: token } = await aShareWith('Offer to reject', 'rita@example.org');
        await inSession(browser, 'reject-pointer', 'phone', async (s) => {
          await s.page.goto(link(token));
          await s.page.getByRole('heading', { name: 'Offer to reject' }).waitFor();
          await s.page.locator('.viewer[data-state="ready"], .viewer[data-state="failed"]').waitFor();
          await s.capture('opened');
          await s.page.getByRole('button', { name: 'Reject' }).click();
          await s.page.getByLabel('Reason (the sender will read it)').fill('The price is wrong');
          await s.capture('reason');
          await s.page.getByRole('button', { name: 'Reject the document' }).click();
          await s.page.getByRole('heading', { name: 'This document was rejected' }).waitFor();
          await s.capture('rejected');
          assert.equal(await s.page.getByRole('button', { name: 'Sign the document' }).count(), 0);
          assert.equal((await ownerView(id)).workflow.shareStateName, 'rejected');
          await smtp.waitFor('owner@example.test', /The price is wrong/);
        });
      });

      it('rejecting with the keyboard only: Tab to Reject, the reason, Tab to confirm, Enter', async () => {
        const { id, link: token } = await aShareWith('Keyboard rejection', 'rolf@example.org');
        await inSession(browser, 'reject-keyboard', 'desktop', async (s) => {
          await s.page.goto(link(token));
          await s.page.getByRole('heading', { name: 'Keyboard rejection' }).waitFor();
          await s.page.locator('.viewer[data-state="ready"], .viewer[data-state="failed"]').waitFor();
          await s.capture('opened');
          await s.tabTo(/^Reject$/);
          await s.page.keyboard.press('Enter');
          await s.expectFocus('Reason (the sender will read it)');
          await s.page.keyboard.type('Not my department');
          await s.capture('reason');
          await s.tabTo(/^Reject the document$/, 3);
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('heading', { name: 'This document was rejected' }).waitFor();
          await s.expectFocus('This document was rejected');
          await s.capture('rejected');
          assert.equal((await ownerView(id)).workflow.shareStateName, 'rejected');
        });
      });

      it('a password-protected share on a phone: locked, a wrong password refused, the right one opens it; signed with a pen (pdfsig: valid)', async () => {
        const { id, link: token } = await aShareWith('Protected contract', 'paula@example.org', {
          password: 'correct horse',
        });
        await inSession(browser, 'password-pointer', 'phone', async (s) => {
          await s.page.goto(link(token));
          await s.page.getByRole('heading', { name: 'Confirm that it is you' }).waitFor();
          await s.capture('locked');
          // Only what this share has (issue 25, 7): a code could not unlock it, so none is offered.
          await s.page.getByText('Enter the password they gave you.').waitFor();
          assert.equal(await s.page.getByRole('button', { name: 'Send me a code' }).count(), 0);
          assert.equal(await s.page.getByLabel('Code', { exact: true }).count(), 0);
          await s.page.getByLabel('Password').fill('wrong horse');
          await s.page.getByRole('button', { name: 'Open the document' }).click();
          await s.page.getByRole('alert').filter({ hasText: 'The password or code is not valid.' }).waitFor();
          await s.capture('wrong-password');
          await s.page.getByLabel('Password').fill('correct horse');
          await s.page.getByRole('button', { name: 'Open the document' }).click();
          await s.page.getByRole('heading', { name: 'Protected contract' }).waitFor();
          await waitForPdf(s);
          await s.capture('unlocked');
          // The recipient session is kept for this tab only, never the link, never for good.
          const kept = await s.page.evaluate<{ session: string; everything: string; cookies: string }>(
            `({
              session: sessionStorage.getItem('signery.recipientSession') ?? '',
              everything: JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }),
              cookies: document.cookie,
            })`,
          );
          assert.match(kept.session, /"token":"shs_/);
          assert.ok(!kept.everything.includes(token), 'the link is not stored');
          // For good, only the name of the viewer's code the browser has (a returning visitor needs no
          // first-page image): a content-hashed asset, nothing of the person or the document.
          const forGood = await s.page.evaluate<Record<string, string>>('({ ...localStorage })');
          assert.deepEqual(Object.keys(forGood), ['signery.viewerCode']);
          assert.match(forGood['signery.viewerCode']!, /^\/web\/assets\/pdf\.worker\.min-[\w-]+\.mjs$/);
          assert.equal(kept.cookies, '');
          // A reload in the same tab keeps the session; another tab, or a forwarded link, is locked.
          await s.page.reload();
          await s.page.getByRole('heading', { name: 'Protected contract' }).waitFor();
          await waitForPdf(s);
          const otherTab = await s.context.newPage();
          await otherTab.goto(link(token));
          await otherTab.getByRole('heading', { name: 'Confirm that it is you' }).waitFor();
          await otherTab.close();
          assert.equal(
            (await server.api('GET', '/share/document', { token })).status,
            403,
            'a forwarded link opens nothing',
          );
          await drawSignature(s, 'pen');
          await agree(s);
          await s.page.getByRole('button', { name: 'Sign the document' }).click();
          await s.page.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
          await s.capture('signed');
          await assertOwnerGetsSignedPdf(id, 2);
        });
      });

      it('a password-protected share with the keyboard only: the password, Enter, then sign (pdfsig: valid)', async () => {
        const { id, link: token } = await aShareWith('Protected by keyboard', 'peter@example.org', {
          password: 'open sesame',
        });
        await inSession(browser, 'password-keyboard', 'desktop', async (s) => {
          await s.page.goto(link(token));
          await s.page.getByRole('heading', { name: 'Confirm that it is you' }).waitFor();
          await s.capture('locked');
          // Focus starts in the password field, the one thing to do there (issue 40).
          await s.expectFocus('Password');
          await s.page.keyboard.type('open sesame');
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('heading', { name: 'Protected by keyboard' }).waitFor();
          await waitForPdf(s);
          await s.capture('unlocked');
          await typeSignature(s, 'Peter Password');
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
          await s.capture('signed');
          await assertOwnerGetsSignedPdf(id, 2);
        });
      });

      it('a share protected by an SMS code: the page asks for the code (POST /share/otp, the server picks SMS) and unlocks with it', async () => {
        const { link: token } = await aShareWith('Coded offer', 'sam@example.org', {
          phone: '+15550009999',
        });
        await inSession(browser, 'sms-code-pointer', 'phone', async (s) => {
          await s.page.goto(link(token));
          await s.page.getByRole('heading', { name: 'Confirm that it is you' }).waitFor();
          assert.equal(
            await s.page.getByLabel('Password').count(),
            0,
            'no password is asked for: it has none',
          );
          await s.page.getByRole('button', { name: 'Send me a code' }).click();
          await s.page.getByText('A code was sent by SMS. It is valid for 10 minutes.').waitFor();
          await s.capture('code-sent');
          const code = await smsCodeTo(server, '+15550009999');
          assert.ok(code, 'the SMS was written');
          await s.page.getByLabel('Code', { exact: true }).fill(code);
          await s.page.getByRole('button', { name: 'Open the document' }).click();
          await s.page.getByRole('heading', { name: 'Coded offer' }).waitFor();
          await s.expectFocus('Coded offer');
          await s.page.locator('.viewer[data-state="ready"], .viewer[data-state="failed"]').waitFor();
          await s.capture('unlocked');
        });
      });

      it('an e-mail code (emailCode): the page asks for the code, the server mails it, and it opens a recipient session', async () => {
        const { link: token } = await aShareWith('Emailed code', 'emil@example.org', { emailCode: true });
        await inSession(browser, 'email-code-pointer', 'phone', async (s) => {
          await s.page.goto(link(token));
          await s.page.getByRole('heading', { name: 'Confirm that it is you' }).waitFor();
          await s.capture('locked');
          await s.page.getByRole('button', { name: 'Send me a code' }).click();
          await s.page.getByText('A code was sent by e-mail. It is valid for 10 minutes.').waitFor();
          await s.capture('code-sent');
          const mail = await smtp.waitFor('emil@example.org', /one-time code/i);
          const code = /<strong>(\d{6})<\/strong>/.exec(decode(mail.raw))?.[1];
          assert.ok(code, 'the code is in the mail');
          await s.page.getByLabel('Code', { exact: true }).fill(code);
          await s.page.getByRole('button', { name: 'Open the document' }).click();
          await s.page.getByRole('heading', { name: 'Emailed code' }).waitFor();
          await s.expectFocus('Emailed code');
          await waitForPdf(s);
          await s.capture('unlocked');
        });
      });

      /** The identity provider's development pages load a web font from the Internet: none here. */
      async function offlineFonts(s: Session): Promise<void> {
        await s.context.route('https://fonts.googleapis.com/**', (route) =>
          route.fulfill({ status: 200, contentType: 'text/css', body: '' }),
        );
      }

      const providerButton = (s: Session) =>
        s.page.getByRole('button', { name: 'Continue with Corporate login' });

      it('a share protected by an identity provider, on a phone: Continue with it, sign in at the provider, back unlocked, sign (pdfsig: valid)', async () => {
        const { id, link: token } = await aShareWith('Identity agreement', 'olga@example.org', {
          allowedOAuths: ['corp'],
        });
        await inSession(browser, 'identity-pointer', 'phone', async (s) => {
          await offlineFonts(s);
          const starts: URL[] = [];
          s.page.on('request', (request: Request) => {
            const url = new URL(request.url());
            if (url.pathname === '/api/v1/share/oidc/corp') starts.push(url);
          });
          await s.page.goto(publicLink(token));
          await s.page.getByRole('heading', { name: 'Confirm that it is you' }).waitFor();
          await providerButton(s).waitFor();
          assert.equal(await s.page.getByLabel('Password').count(), 0, 'the identity comes first');
          await s.capture('locked');
          await providerButton(s).click();
          const login = s.page.locator('input[name="login"]');
          await login.waitFor();
          await s.capture('provider-sign-in', { axe: false });
          await login.fill('olga');
          await s.page.locator('input[name="password"]').fill('any');
          await s.page.getByRole('button', { name: 'Sign-in' }).click();
          await s.page.getByRole('button', { name: 'Continue', exact: true }).waitFor();
          await s.capture('provider-consent', { axe: false });
          await s.page.getByRole('button', { name: 'Continue', exact: true }).click();
          await s.page.getByRole('heading', { name: 'Identity agreement' }).waitFor();
          assert.equal(s.page.url(), publicLink(token), 'back on the link, `#isUnlocked&token` cleared');
          await s.page.getByText('You confirmed who you are with Corporate login.').waitFor();
          await waitForPdf(s);
          await s.capture('unlocked');
          // The start: the token for this one navigation, and the page's own address to come back to.
          assert.equal(starts.length, 1);
          assert.equal(starts[0]?.origin, proxy.url);
          assert.equal(starts[0]?.searchParams.get('token'), token);
          assert.equal(starts[0]?.searchParams.get('redirect'), publicLink(token));
          assert.equal(
            (await server.api('GET', '/share/document', { token })).status,
            403,
            'the link stays locked',
          );
          await drawSignature(s, 'touch');
          await agree(s);
          await s.page.getByRole('button', { name: 'Sign the document' }).click();
          await s.page.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
          await s.capture('signed');
          await assertOwnerGetsSignedPdf(id, 2);
        });
      });

      it('an identity provider and a password, with the keyboard only: the provider’s sign-in, back still locked, the password, then sign (pdfsig: valid)', async () => {
        const { id, link: token } = await aShareWith('Identity and password', 'kurt@example.org', {
          allowedOAuths: ['corp'],
          password: 'open sesame',
        });
        await inSession(browser, 'identity-keyboard', 'desktop', async (s) => {
          await offlineFonts(s);
          const focusedName = () =>
            s.page.evaluate<string>(`document.activeElement?.getAttribute('name') ?? ''`);
          await s.page.goto(publicLink(token));
          await s.page.getByRole('heading', { name: 'Confirm that it is you' }).waitFor();
          await s.capture('locked');
          await s.tabTo(/^Continue with Corporate login$/);
          await s.page.keyboard.press('Enter');
          // The provider's own pages: its login field and its Continue button take the focus.
          await s.page.locator('input[name="login"]').waitFor();
          for (let i = 0; i < 40 && (await focusedName()) !== 'login'; i++) await sleep(50);
          assert.equal(await focusedName(), 'login');
          await s.page.keyboard.type('kurt');
          await s.page.keyboard.press('Tab');
          await s.page.keyboard.type('any');
          await s.capture('provider-sign-in', { axe: false });
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('button', { name: 'Continue', exact: true }).waitFor();
          await s.expectFocus('Continue');
          await s.page.keyboard.press('Enter');
          // Back on the link: the identity is proven, the password is still owed.
          await s.page.getByText('Corporate login confirmed who you are.', { exact: false }).waitFor();
          await s.expectFocus('Password');
          assert.equal(s.page.url(), publicLink(token));
          assert.equal(await providerButton(s).count(), 0);
          await s.capture('identity-confirmed');
          await s.page.keyboard.type('open sesame');
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('heading', { name: 'Identity and password' }).waitFor();
          await waitForPdf(s);
          await s.capture('unlocked');
          await typeSignature(s, 'Kurt Keyboard');
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
          await s.capture('signed');
          await assertOwnerGetsSignedPdf(id, 2);
        });
      });

      it('an identity that is not the share’s: the server refuses it (403), and back on the link the page says so and stays locked', async () => {
        const { link: token } = await aShareWith('Not for Mallory', 'nina@example.org', {
          allowedOAuths: ['corp'],
        });
        await inSession(browser, 'identity-refused', 'desktop', async (s) => {
          await offlineFonts(s);
          await s.page.goto(publicLink(token));
          await providerButton(s).click();
          await s.page.locator('input[name="login"]').fill('mallory');
          await s.page.locator('input[name="password"]').fill('any');
          await s.page.getByRole('button', { name: 'Sign-in' }).click();
          await s.page.getByRole('button', { name: 'Continue', exact: true }).click();
          // The server's callback answers the refusal itself, as JSON (src/http/routes/share-oidc.ts).
          await s.page.getByText('does not match this share').waitFor();
          const refusal = JSON.parse(await s.page.locator('body').innerText()) as Record<string, unknown>;
          assert.equal(refusal.statusCode, 403);
          assert.equal(refusal.code, 'FORBIDDEN');
          await s.capture('refused-by-the-server', { axe: false });
          await s.page.goto(publicLink(token));
          await s.page
            .getByRole('alert')
            .filter({ hasText: 'Signing in with Corporate login did not confirm who you are' })
            .waitFor();
          await providerButton(s).waitFor();
          await s.capture('refused-back-on-the-link');
          assert.equal((await server.api('GET', '/share/document', { token })).status, 403);
          // Said once: opening the link again shows the usual screen.
          await s.page.reload();
          await providerButton(s).waitFor();
          assert.equal(await s.page.getByRole('alert').count(), 0);
        });
      });

      it('the share’s own purpose, language, message and status from the link’s answer: approve in French, then “already responded”', async () => {
        const id = await newDoc('Devis');
        await shareDocument(server, owner, id, {
          to: [
            {
              sharePurpose: 'approve',
              shareTo: 'fanny@example.org',
              language: 'fr',
              message: 'Merci de valider avant vendredi',
            },
            { sharePurpose: 'sign', shareTo: 'gus@example.org' },
          ],
        });
        const token = await linkOf(smtp, 'fanny@example.org');
        await inSession(browser, 'approve-fr', 'phone', async (s) => {
          await s.page.goto(link(token));
          await s.page.getByRole('heading', { name: 'Devis' }).waitFor();
          await waitForPdf(s);
          assert.equal(await s.page.getAttribute('html', 'lang'), 'fr');
          await s.page.getByText('Merci de valider avant vendredi').waitFor();
          assert.equal(await s.page.getByRole('heading', { name: 'Vos champs' }).count(), 0);
          assert.equal(await s.page.getByRole('button', { name: 'Signer le document' }).count(), 0);
          await s.capture('opened');
          await s.page.getByRole('button', { name: 'Approuver' }).click();
          await s.page.getByRole('heading', { name: 'Merci : votre réponse a été enregistrée.' }).waitFor();
          await s.capture('approved');
          await s.page.reload();
          await s.page.getByRole('heading', { name: 'Vous avez déjà répondu' }).waitFor();
          assert.equal(await s.page.getByRole('button', { name: 'Approuver' }).count(), 0);
          await s.capture('already-responded');
          assert.deepEqual((await ownerView(id)).waitingFor, ['gus@example.org']);
        });
      });

      it('an internal user approving: the page says what an approval asks of them, they approve, and sign out (issue 25)', async () => {
        const id = await newDoc('Budget 2027', 1);
        await shareDocument(server, owner, id, { to: [{ sharePurpose: 'approve', shareTo: 'ivy' }] });
        await inSession(browser, 'internal-approve', 'phone', async (s) => {
          await s.page.goto(`${server.url}/sign`);
          await s.page.getByLabel('User name').fill('ivy');
          await s.page.getByLabel('Password').fill('user-password-1');
          await s.page.getByRole('button', { name: 'Sign in' }).click();
          await s.page.getByRole('heading', { name: 'Waiting for you' }).waitFor();
          await s.page.getByRole('button', { name: 'Sign out' }).waitFor();
          await s.page.getByRole('link', { name: 'Budget 2027' }).click();
          await s.page.getByRole('heading', { name: 'Budget 2027' }).waitFor();
          await waitForPdf(s);
          await s.page
            .getByText(/^You are asked to approve this document\. Read it, then approve it/)
            .waitFor();
          await s.capture('approval-asked');
          await s.page.getByRole('button', { name: 'Approve' }).click();
          await s.page.getByRole('heading', { name: 'Thank you: your answer was recorded.' }).waitFor();
          assert.equal(await s.page.getByText(/^You are asked to approve/).count(), 0, 'asked no more');
          // Their list keeps what they did: the completed document, to open and download again.
          await s.page.goto(`${server.url}/sign`);
          await s.page.getByRole('heading', { name: 'Waiting for you' }).waitFor();
          const done = s.page.getByRole('region', { name: 'Done by you' });
          await done.getByRole('link', { name: 'Budget 2027' }).waitFor();
          // An approval alone starts no signing round: no round state to tell, only who sent it.
          assert.equal(
            await done.locator('.inbox-meta').innerText(),
            'Olivia Owner',
            'the sharer by the name they show',
          );
          assert.equal(await s.page.getByText('Nothing is waiting for you.').count(), 1);
          await s.capture('inbox-done');
          await s.page.getByRole('button', { name: 'Sign out' }).click();
          await s.page.getByRole('heading', { name: 'Sign in' }).waitFor();
          // The session is over on the server too: the list asks to sign in again.
          await s.page.goto(`${server.url}/sign`);
          await s.page.getByRole('heading', { name: 'Sign in' }).waitFor();
        });
      });

      it('an internal user from their pending actions: sign in, open, move the box, draw with a mouse, initials on every page, sign (pdfsig: valid)', async () => {
        const id = await newDoc('Internal memo', 3);
        await shareDocument(server, owner, id, {
          to: [{ sharePurpose: 'sign', shareTo: 'ivy', message: 'Please sign by Friday' }],
        });
        await inSession(browser, 'internal-pointer', 'desktop', async (s) => {
          await s.page.goto(`${server.url}/sign`);
          await s.page.getByRole('heading', { name: 'Sign in' }).waitFor();
          await s.capture('sign-in');
          await s.page.getByLabel('User name').fill('ivy');
          await s.page.getByLabel('Password').fill('user-password-1');
          await s.page.getByRole('button', { name: 'Sign in' }).click();
          await s.page.getByRole('heading', { name: 'Waiting for you' }).waitFor();
          await s.capture('pending-actions');
          await s.page.getByRole('link', { name: 'Internal memo' }).click();
          await s.page.getByRole('heading', { name: 'Internal memo' }).waitFor();
          await waitForPdf(s);
          await s.page.getByText('Please sign by Friday').waitFor();
          await s.capture('opened');
          // The viewer: pages, zoom, fit to width.
          await s.page.getByRole('button', { name: 'Next page' }).click();
          await s.page.locator('.tool-status', { hasText: 'Page 2 of 3' }).waitFor();
          const fit = s.page.getByRole('button', { name: 'Fit to width' });
          const width = (await s.page.locator('.page').first().boundingBox())?.width ?? 0;
          await s.page.getByRole('button', { name: 'Zoom out' }).click();
          assert.equal(await fit.getAttribute('aria-pressed'), 'false');
          assert.ok(((await s.page.locator('.page').first().boundingBox())?.width ?? 0) < width);
          await s.capture('zoomed-out');
          await fit.click();
          assert.equal(await fit.getAttribute('aria-pressed'), 'true');
          assert.equal((await s.page.locator('.page').first().boundingBox())?.width, width);
          const field = s.page.getByRole('button', { name: /^Signature, required, page 3/ });
          await field.scrollIntoViewIfNeeded();
          const before = await field.boundingBox();
          assert.ok(before);
          await s.page.mouse.move(before.x + before.width / 2, before.y + before.height / 2);
          await s.page.mouse.down();
          await s.page.mouse.move(before.x - 200, before.y - 150, { steps: 8 });
          await s.page.mouse.up();
          const moved = await field.boundingBox();
          assert.ok(moved && moved.y < before.y - 100, 'the box follows the drag');
          await s.capture('moved');
          await drawSignature(s, 'mouse');
          await s.page.getByLabel('Also put my initials on every page').check();
          await s.page.getByRole('button', { name: /^Initials, required, page 1/ }).click();
          await s.page.getByRole('tab', { name: 'Type' }).click();
          await s.page.getByRole('textbox', { name: 'Your initials' }).fill('II');
          await s.page.getByRole('button', { name: 'Use it' }).click();
          await s.page.getByRole('button', { name: /^Initials, done, page 2/ }).waitFor();
          await s.page.locator('.progress', { hasText: '2 of 2 fields completed' }).waitFor();
          await s.capture('fields-done');
          await agree(s);
          await s.page.getByRole('button', { name: 'Sign the document' }).click();
          await s.page.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
          await waitForPdf(s);
          await s.capture('signed');
          const file = await download(s, () =>
            s.page.getByRole('button', { name: 'Download the signed PDF' }).click(),
          );
          await assertSignedPdf(file, 2);
        });
      });

      it('the share’s fields, highlighted and visited in order, in the share’s language (German), keyboard only on a phone: signature, text, initials, a requested file (pdfsig: valid)', async () => {
        const id = await newDoc('Mietvertrag');
        const at = (x: number, y: number, w = 0.3, height = 0.07) => ({
          percentX: x,
          percentY: y,
          percentWidth: w,
          percentHeight: height,
        });
        const signatureFields = [
          {
            type: 'annotation',
            subtype: 'annotation_submitted_file',
            user: ['jon'],
            pages: [2],
            position: at(0.1, 0.5),
            order: 4,
            customId: 'id-card',
            required: true,
          },
          { type: 'signature', user: ['jon'], pages: [1], position: at(0.55, 0.8), order: 1, required: true },
          {
            type: 'annotation',
            subtype: 'annotation_generic',
            user: ['jon'],
            pages: [1],
            position: at(0.1, 0.8),
            order: 2,
            customId: 'city',
            tooltip: 'Ort',
            required: true,
          },
          {
            type: 'initials',
            user: ['jon'],
            pages: [2],
            position: at(0.8, 0.9, 0.12, 0.05),
            order: 3,
            required: true,
          },
        ];
        const shares = await shareDocument(server, owner, id, {
          to: [{ sharePurpose: 'sign', shareTo: 'jon', language: 'de' }],
          share: { signatureFields },
        });
        const cityField = (shares[0].signatureFields as { customId?: string; fieldId: string }[]).find(
          (field) => field.customId === 'city',
        )?.fieldId;
        const fieldOf = (type: string) =>
          (shares[0].signatureFields as { type: string; fieldId: string }[]).find((f) => f.type === type)
            ?.fieldId;
        assert.match(cityField ?? '', /^fld_/);
        await inSession(browser, 'fields-keyboard-de', 'phone', async (s) => {
          let signBody: unknown;
          s.page.on('request', (request: Request) => {
            if (request.method() === 'PUT' && request.url().includes('/share/document/sign/'))
              signBody = request.postDataJSON();
          });
          await s.page.goto(`${server.url}/sign`);
          await s.page.getByRole('heading', { name: 'Sign in' }).waitFor();
          await s.tabTo(/^User name$/);
          await s.page.keyboard.type('jon');
          await s.page.keyboard.press('Tab');
          await s.page.keyboard.type('user-password-1');
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('heading', { name: 'Waiting for you' }).waitFor();
          await s.tabTo(/^Mietvertrag$/);
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('heading', { name: 'Mietvertrag' }).waitFor();
          await waitForPdf(s);
          assert.equal(await s.page.getAttribute('html', 'lang'), 'de');
          await s.page.locator('.progress', { hasText: '0 von 4 Feldern ausgefüllt' }).waitFor();
          await s.capture('opened');
          await s.tabTo(/^Nächstes Feld$/);
          await s.page.keyboard.press('Enter');
          await s.expectFocus(/^Unterschrift, Pflichtfeld, Seite 1/); // order 1 first
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('tab', { name: 'Tippen', selected: true }).waitFor();
          await s.expectFocus('Ihr vollständiger Name');
          await s.page.keyboard.type('Jon Schmidt');
          await s.capture('signature');
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('button', { name: /^Unterschrift, erledigt/ }).waitFor();
          await s.expectFocus(/^Textfeld, Pflichtfeld, Seite 1\. Ort/); // then order 2
          await s.page.keyboard.press('Enter');
          await s.expectFocus('Text (Pflichtfeld)');
          await s.page.keyboard.type('Berlin');
          await s.capture('text');
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('button', { name: /^Textfeld, erledigt/ }).waitFor();
          await s.expectFocus(/^Kürzel, Pflichtfeld, Seite 2/); // then order 3
          await s.page.keyboard.press('Enter');
          await s.expectFocus('Ihr Kürzel');
          await s.page.keyboard.type('JS');
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('button', { name: /^Kürzel, erledigt/ }).waitFor();
          await s.expectFocus(/^Anzuhängende Datei, Pflichtfeld, Seite 2/); // then order 4
          await s.page.keyboard.press('Enter');
          await s.expectFocus('Datei (Pflichtfeld)');
          // Choosing the file is the system's own (keyboard-accessible) dialog: handed over here.
          await s.page.locator('dialog input[type=file]').setInputFiles({
            name: 'ausweis.pdf',
            mimeType: 'application/pdf',
            buffer: makePdf({ lines: ['ID card'] }),
          });
          await s.capture('file');
          await s.tabTo(/^Anhängen$/, 3);
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('button', { name: /^Anzuhängende Datei, erledigt/ }).waitFor();
          await s.page.locator('.progress', { hasText: '4 von 4 Feldern ausgefüllt' }).waitFor();
          await agreeByKeyboard(
            s,
            'Ich habe diese Erklärung gelesen und bin mit der elektronischen Unterschrift einverstanden.',
            'Dokument unterschreiben',
          );
          await s.capture('fields-done');
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('heading', { name: 'Danke, Sie haben unterschrieben' }).waitFor();
          await waitForPdf(s);
          await s.capture('signed');
          assert.deepEqual(signBody, {
            id,
            signatures: [
              {
                type: 'signature',
                blob: (signBody as { signatures: { blob: string }[] }).signatures[0]?.blob,
                // Recipients draw only in their fields: each entry names the one it fills, with the
                // field's pages and position (issue 40).
                fieldId: fieldOf('signature'),
                pages: [1],
                position: at(0.55, 0.8),
              },
              {
                type: 'initials',
                blob: (signBody as { signatures: { blob: string }[] }).signatures[1]?.blob,
                fieldId: fieldOf('initials'),
                pages: [2],
                position: at(0.8, 0.9, 0.12, 0.05),
              },
            ],
            // The field's own identity (issue 24, 2), the one the share gave it.
            annotations: [{ fieldId: cityField, text: 'Berlin', pages: [1], position: at(0.1, 0.8) }],
          });
          const done = await ownerView(id);
          assert.deepEqual(
            done.submittedFiles.map((f: { documentname: string }) => f.documentname),
            ['ausweis.pdf'],
          );
          await s.tabTo(/^Unterschriebenes PDF herunterladen$/);
          const file = await download(s, () => s.page.keyboard.press('Enter'));
          await assertSignedPdf(file, 2);
        });
      });

      /**
       * A share with one field of every type the API accepts (issue 25), on two pages: text, date,
       * number, select from an enum, select from a list (optional), checkbox, initials, a requested
       * file, signature, in this order. Dates are written dd.MM.yyyy.
       */
      async function aShareOfEveryType(email: string): Promise<{ id: string; link: string }> {
        const box = (page: number, y: number, w = 0.35) => ({
          pages: [page],
          position: { percentX: 0.1, percentY: y, percentWidth: w, percentHeight: 0.04 },
        });
        const value = (subtype: string, order: number, y: number, more: Record<string, unknown>) => ({
          type: 'annotation',
          subtype,
          user: [email],
          order,
          required: true,
          ...box(1, y),
          ...more,
        });
        return anExternalShare(server, owner, {
          title: `Every field type (${email})`,
          pdf: { pages: 2, lines },
          email,
          recipient: { dateFormat: 'dd.MM.yyyy' },
          share: {
            signatureFields: [
              value('annotation_generic', 1, 0.2, { tooltip: 'City' }),
              value('annotation_date', 2, 0.28, { tooltip: 'Start date' }),
              value('annotation_number', 3, 0.36, {
                tooltip: 'Amount in euros',
                config: JSON.stringify({ min: 0, max: 100000, decimals: 2 }),
              }),
              value('annotation_select', 4, 0.44, { tooltip: 'Country', config: '{"enum":"countries"}' }),
              value('annotation_select', 5, 0.52, {
                tooltip: 'Plan',
                required: false,
                config: JSON.stringify({ options: ['Basic', { value: 'pro', label: 'Professional' }] }),
              }),
              value('annotation_checkbox', 6, 0.6, { tooltip: 'I agree to the terms', ...box(1, 0.6, 0.04) }),
              { type: 'initials', user: [email], order: 7, required: true, ...box(2, 0.2, 0.12) },
              value('annotation_submitted_file', 8, 0.3, { tooltip: 'Proof of address', ...box(2, 0.3) }),
              { type: 'signature', user: [email], order: 9, required: true, ...box(2, 0.8) },
            ],
          },
        });
      }

      /**
       * The next step stays in view and the window itself never scrolls: one scroll area (the
       * document's), scrolled here to its top, middle and end, with the wheel too; every field box is
       * at least 24 px both ways (WCAG 2.2 target size).
       */
      async function assertOneScrollAreaAndDockInView(s: Session): Promise<void> {
        const viewport = s.page.viewportSize()!;
        await s.page.mouse.move(viewport.width / 2, viewport.height / 2);
        await s.page.mouse.wheel(0, 600);
        for (let i = 0; i < 40; i++) {
          if (await s.page.evaluate<boolean>(`document.querySelector('.viewer-scroll').scrollTop > 0`)) break;
          await sleep(50);
        }
        for (const at of [0, 0.5, 1]) {
          const seen = await s.page.evaluate<{
            windowScrolls: boolean;
            areaScrolled: number;
            dock: { top: number; bottom: number };
            onTop: string;
            smallest: number;
          }>(`(() => {
            const area = document.querySelector('.viewer-scroll');
            area.scrollTop = (area.scrollHeight - area.clientHeight) * ${at};
            const dock = document.querySelector('.action-dock').getBoundingClientRect();
            const primary = document.querySelector('.action-bar .button--primary').getBoundingClientRect();
            const hit = document.elementFromPoint(primary.x + primary.width / 2, primary.y + primary.height / 2);
            const sizes = [...document.querySelectorAll('.field')].map((f) => {
              const r = f.getBoundingClientRect();
              return Math.min(r.width, r.height);
            });
            return {
              windowScrolls: document.scrollingElement.scrollHeight > window.innerHeight || window.scrollY !== 0,
              areaScrolled: area.scrollTop,
              dock: { top: dock.top, bottom: dock.bottom },
              onTop: hit?.closest('.button--primary')?.textContent ?? hit?.outerHTML ?? '',
              smallest: Math.min(...sizes),
            };
          })()`);
          assert.equal(seen.windowScrolls, false, 'the window does not scroll: one scroll area');
          assert.ok(seen.dock.top >= 0 && seen.dock.bottom <= viewport.height, `dock in view at ${at}`);
          assert.match(seen.onTop, /^(Next field|Sign the document)$/, `the next step is visible at ${at}`);
          assert.ok(seen.smallest >= 24, `field boxes ${seen.smallest}px, at least 24px`);
        }
        await s.page.evaluate(`document.querySelector('.viewer-scroll').scrollTop = 0`);
      }

      /** What the signer wrote, as the signed revision has it (MuPDF's text of page 1). */
      async function assertWrittenOnPage1(id: string, texts: string[]): Promise<void> {
        const path = await writeMainFile(server, owner, id, space);
        const page = await tool('mutool', ['draw', '-F', 'txt', '-o', '-', path, '1']);
        for (const text of texts) assert.ok(page.includes(text), `"${text}" on page 1:\n${page}`);
        assert.match(page, /^\s*X\s*$/m, 'the checked box');
      }

      const today = () => {
        const now = new Date();
        const pad = (n: number) => String(n).padStart(2, '0');
        return `${pad(now.getDate())}.${pad(now.getMonth() + 1)}.${now.getFullYear()}`;
      };

      const proof = { name: 'bill.pdf', mimeType: 'application/pdf', buffer: makePdf({ lines: ['Bill'] }) };

      it('every field type on a phone, by touch: native date picker, number checked on the field, select from an enum, checkbox, initials, file; the action bar stays in view (issue 25)', async () => {
        const { id, link: token } = await aShareOfEveryType('types-phone@example.org');
        await inSession(browser, 'field-types-phone', 'phone', async (s) => {
          let signBody: { annotations: { fieldId: string; text: string }[] } | undefined;
          s.page.on('request', (request: Request) => {
            if (request.method() === 'PUT' && request.url().includes('/share/document/sign/'))
              signBody = request.postDataJSON();
          });
          await s.page.goto(link(token));
          await waitForPdf(s);
          // The date is prefilled with today, in the share's format; 7 of the other 8 are required.
          await s.page
            .getByRole('button', { name: new RegExp(`^Date, done, page 1\\. Start date\\. ${today()}`) })
            .waitFor();
          await s.page.locator('.progress', { hasText: '1 of 9 fields completed' }).waitFor();
          await s.page.getByRole('button', { name: 'Next field' }).waitFor();
          await s.capture('opened');
          await assertOneScrollAreaAndDockInView(s);

          const fill = async (name: RegExp, act: () => Promise<void>, confirm = 'Save') => {
            await s.page.getByRole('button', { name }).click();
            await act();
            await s.page.getByRole('button', { name: confirm, exact: true }).click();
            await s.page.locator('dialog').waitFor({ state: 'detached' });
          };
          await fill(/^Text field, required/, () => s.page.getByLabel('Text (required)').fill('Berlin'));
          await fill(/^Date, done/, () => s.page.getByLabel('Start date (required)').fill('2026-03-01'));
          await s.page.getByRole('button', { name: /^Date, done.*01\.03\.2026/ }).waitFor();
          // A number the server would refuse is refused on the field, before anything is sent.
          await s.page.getByRole('button', { name: /^Number, required/ }).click();
          const amount = s.page.getByLabel('Amount in euros (required)');
          await amount.fill('1250.555');
          await s.page.getByRole('button', { name: 'Save', exact: true }).click();
          await s.page
            .getByRole('alert')
            .filter({ hasText: 'Use at most 2 digits after the decimal point.' })
            .waitFor();
          assert.equal(await amount.getAttribute('aria-invalid'), 'true');
          assert.match((await amount.getAttribute('aria-describedby')) ?? '', /error/);
          await s.capture('number-refused');
          await amount.fill('1250.5');
          await s.page.getByRole('button', { name: 'Save', exact: true }).click();
          await s.page.getByRole('button', { name: /^Number, done.*1250\.5$/ }).waitFor();
          await fill(/^Choice, required, page 1\. Country/, async () => {
            await s.page.getByLabel('Country (required)').selectOption('FR');
            await s.capture('select-from-enum');
          });
          await s.page.getByRole('button', { name: /^Choice, done.*Country\. France$/ }).waitFor();
          await fill(/^Choice, optional, page 1\. Plan/, async () => {
            await s.page.getByLabel('Plan', { exact: true }).selectOption('pro');
          });
          await s.page
            .getByRole('checkbox', { name: /^Checkbox, required, page 1\. I agree to the terms/ })
            .check();
          await s.page.getByRole('button', { name: /^Initials, required/ }).click();
          await s.page.getByRole('tab', { name: 'Type' }).click();
          await s.page.getByRole('textbox', { name: 'Your initials' }).fill('TP');
          await s.page.getByRole('button', { name: 'Use it' }).click();
          await fill(
            /^File to attach, required/,
            () => s.page.locator('dialog input[type=file]').setInputFiles(proof),
            'Attach',
          );
          await s.page.locator('.progress', { hasText: '8 of 9 fields completed' }).waitFor();
          await drawSignature(s, 'touch');
          await s.page.locator('.progress', { hasText: '9 of 9 fields completed' }).waitFor();
          await s.capture('fields-done');
          await assertOneScrollAreaAndDockInView(s);
          await agree(s);
          await s.page.getByRole('button', { name: 'Sign the document' }).click();
          await s.page.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
          await s.capture('signed');
          assert.deepEqual(
            signBody?.annotations.map((a) => a.text),
            ['Berlin', '01.03.2026', '1250.5', 'FR', 'pro', 'true'],
            'the answers as the API takes them: the date in the share’s format, the options’ values',
          );
        });
        await assertWrittenOnPage1(id, ['Berlin', '01.03.2026', '1250.5', 'France', 'Professional']);
      });

      it('every field type on a desktop with the keyboard only: Next field, Enter, the controls, Space for the box (issue 25)', async () => {
        const { id, link: token } = await aShareOfEveryType('types-desktop@example.org');
        let picked = '';
        await inSession(browser, 'field-types-keyboard', 'desktop', async (s) => {
          await s.page.goto(link(token));
          await waitForPdf(s);
          await s.capture('opened');
          await assertOneScrollAreaAndDockInView(s);
          const enter = async (field: RegExp, control: string) => {
            await s.expectFocus(field);
            await s.page.keyboard.press('Enter');
            await s.expectFocus(control);
          };
          await s.tabTo(/^Next field$/);
          await s.page.keyboard.press('Enter');
          await enter(/^Text field, required/, 'Text (required)');
          await s.page.keyboard.type('Hamburg');
          await s.page.keyboard.press('Enter');
          // The date was done already (today): on to the number; back to the date with Shift+Tab.
          await s.expectFocus(/^Number, required/);
          await s.page.keyboard.press('Shift+Tab');
          await enter(/^Date, done/, 'Start date (required)');
          // The picker's own parts (their order is the browser's locale): the first one up by one.
          await s.page.keyboard.press('ArrowUp');
          const [year, month, day] = (await s.page.evaluate<string>('document.activeElement.value')).split(
            '-',
          );
          picked = `${day}.${month}.${year}`;
          await s.page.keyboard.press('Enter');
          await s.page
            .getByRole('button', { name: new RegExp(`^Date, done.*${picked.replaceAll('.', '\\.')}$`) })
            .waitFor();
          await enter(/^Number, required/, 'Amount in euros (required)');
          await s.page.keyboard.type('-3');
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('alert').filter({ hasText: 'Enter a number from 0 to 100000.' }).waitFor();
          await s.expectFocus('Amount in euros (required)'); // the refused control keeps the focus
          await s.capture('number-refused');
          await s.page.keyboard.press('Control+A');
          await s.page.keyboard.type('99');
          await s.page.keyboard.press('Enter');
          await enter(/^Choice, required, page 1\. Country/, 'Country (required)');
          await s.page.keyboard.press('ArrowDown'); // from "Choose…" to the enum's first record
          await s.tabTo(/^Save$/, 3);
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('button', { name: /^Choice, done.*Germany$/ }).waitFor();
          // The optional plan is left as it is; the box is next among the required fields.
          await s.expectFocus(/^Checkbox, required, page 1\. I agree to the terms/);
          await s.page.keyboard.press('Space');
          assert.equal(
            await s.page.getByRole('checkbox', { name: /I agree to the terms/ }).isChecked(),
            true,
          );
          await s.tabTo(/^Initials, required/, 3);
          await enter(/^Initials, required/, 'Your initials');
          await s.page.keyboard.type('TD');
          await s.page.keyboard.press('Enter');
          await enter(/^File to attach, required/, 'File (required)');
          await s.page.locator('dialog input[type=file]').setInputFiles(proof);
          await s.tabTo(/^Attach$/, 3);
          await s.page.keyboard.press('Enter');
          await enter(/^Signature, required/, 'Your full name');
          await s.page.keyboard.type('Tess Desktop');
          await s.page.keyboard.press('Enter');
          await agreeByKeyboard(s);
          await s.capture('fields-done');
          await s.page.keyboard.press('Enter');
          await s.page.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
          await s.capture('signed');
        });
        await assertWrittenOnPage1(id, ['Hamburg', picked, '99', 'Germany']);
      });

      it('a requested file survives a reload: the page shows what was attached, the recipient replaces it, then signs (issue 25, 1)', async () => {
        const email = 'rena@example.org';
        const box = (y: number) => ({ percentX: 0.1, percentY: y, percentWidth: 0.3, percentHeight: 0.07 });
        const { id, link: token } = await anExternalShare(server, owner, {
          title: 'Proof of address',
          pdf: { pages: 1, lines },
          email,
          share: {
            signatureFields: [
              {
                type: 'annotation',
                subtype: 'annotation_submitted_file',
                user: [email],
                pages: [1],
                position: box(0.5),
                customId: 'proof',
                required: true,
              },
              { type: 'signature', user: [email], pages: [1], position: box(0.8), required: true },
            ],
          },
        });
        const attach = async (s: Session, name: string, confirm: string) => {
          await s.page.locator('dialog input[type=file]').setInputFiles({
            name,
            mimeType: 'application/pdf',
            buffer: makePdf({ lines: [name] }),
          });
          await s.page.getByRole('button', { name: confirm, exact: true }).click();
          await s.page
            .getByRole('button', { name: new RegExp(`^File to attach, done.*Attached: ${name}`) })
            .waitFor();
        };
        await inSession(browser, 'file-reload', 'desktop', async (s) => {
          await s.page.goto(link(token));
          await s.page.getByRole('heading', { name: 'Proof of address' }).waitFor();
          await waitForPdf(s);
          await s.page.getByRole('button', { name: /^File to attach, required/ }).click();
          await attach(s, 'old-bill.pdf', 'Attach');
          // Reloaded (or come back later): the field shows the submission, and the count counts it.
          await s.page.reload();
          await s.page.getByRole('heading', { name: 'Proof of address' }).waitFor();
          await waitForPdf(s);
          const field = s.page.getByRole('button', {
            name: /^File to attach, done.*Attached: old-bill\.pdf/,
          });
          await field.waitFor();
          await s.page.locator('.progress', { hasText: '1 of 2 fields completed' }).waitFor();
          await s.capture('file-after-reload');
          await field.click();
          await s.page.getByRole('heading', { name: 'Replace the attached file' }).waitFor();
          await s.capture('file-replace');
          await attach(s, 'new-bill.pdf', 'Replace');
          await drawSignature(s, 'mouse');
          await agree(s);
          await s.page.getByRole('button', { name: 'Sign the document' }).click();
          await s.page.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
        });
        const done = await ownerView(id);
        assert.equal(done.workflow.shareStateName, 'completed');
        assert.deepEqual(
          done.submittedFiles.map((f: { documentname: string }) => f.documentname),
          ['new-bill.pdf'],
          'the replacement, and only it',
        );
      });

      it('delegating when the share allows it: the new recipient gets their own link', async () => {
        const { id, link: token } = await aShareWith('To hand on', 'dora@example.org', {
          rights: ['delegate'],
        });
        await inSession(browser, 'delegate-pointer', 'desktop', async (s) => {
          await s.page.goto(link(token));
          await s.page.getByRole('heading', { name: 'To hand on' }).waitFor();
          await s.page.locator('.viewer[data-state="ready"], .viewer[data-state="failed"]').waitFor();
          await s.page.getByRole('button', { name: 'Delegate' }).click();
          await s.page.getByLabel('Their e-mail address').fill('not an address');
          await s.page.getByRole('button', { name: 'Delegate' }).last().click();
          await s.page.getByRole('alert').filter({ hasText: 'Enter a valid e-mail address.' }).waitFor();
          await s.page.getByLabel('Their e-mail address').fill('deputy@example.org');
          await s.page.getByLabel('Message (optional)').fill('Could you take this one?');
          await s.capture('delegate-dialog');
          await s.page.getByRole('button', { name: 'Delegate' }).last().click();
          await s.page.getByText('The request was passed on to deputy@example.org.').waitFor();
          await s.capture('delegated');
          await smtp.waitFor('deputy@example.org', /\/s\/shr_/);
          assert.deepEqual((await ownerView(id)).waitingFor, ['deputy@example.org']);
        });
        // The delegate sees who passed it on, and their note (issue 25).
        await inSession(browser, 'delegate-received', 'phone', async (s) => {
          await s.page.goto(link(await linkOf(smtp, 'deputy@example.org')));
          await s.page.getByRole('heading', { name: 'To hand on' }).waitFor();
          await s.page.getByText('Passed on to you by dora@example.org').waitFor();
          await s.page.getByText('Could you take this one?').waitFor();
          await s.capture('delegate-opens');
        });
      });

      it('clear messages for a completed, a cancelled, an expired share and a link that does not work', async () => {
        const { id: completed, link: completedToken } = await aShareWith(
          'Already complete',
          'cora@example.org',
        );
        const signed = await signByLink(server, completedToken, completed, [
          {
            type: 'signature',
            position: { percentX: 0.1, percentY: 0.8, percentWidth: 0.3, percentHeight: 0.08 },
          },
        ]);
        assert.equal(signed.status, 200, signed.text);
        const { id: cancelled, link: cancelledToken } = await aShareWith(
          'Withdrawn offer',
          'carl@example.org',
        );
        assert.equal(
          (await server.api('POST', '/share/cancel', { token: owner, body: { id: cancelled } })).status,
          200,
        );
        const validUntil = new Date(clock.now().getTime() + 3_600_000).toISOString();
        const { id: expired, link: expiredToken } = await aShareWith('Old offer', 'eva@example.org', {
          validUntil,
        });
        clock.advance(2 * 3_600_000);
        for (let i = 0; i < 100 && (await ownerView(expired)).workflow.shareStateName !== 'expired'; i++)
          await sleep(100);

        await inSession(browser, 'states', 'phone', async (s) => {
          // DESIGN: a share's link has no power once its share ended, and /s/… says so in a page of its
          // own (no signer page, no document); a recipient who completed may download what they signed.
          for (const [token, heading, step] of [
            [completedToken, 'You have already responded', 'completed'],
            [cancelledToken, 'This link has ended', 'cancelled'],
            [expiredToken, 'This link has ended', 'expired'],
            ['shr_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'This link does not work', 'invalid-link'],
          ] as const) {
            await s.page.goto(link(token));
            await s.page.getByRole('heading', { name: heading }).waitFor();
            assert.equal(await s.page.getByRole('button', { name: 'Sign the document' }).count(), 0, step);
            assert.equal(await s.page.getByRole('button', { name: 'Reject' }).count(), 0, step);
            assert.equal(await s.page.getByText('Already complete').count(), 0, `${step}: no document shown`);
            await s.capture(step);
            if (step === 'completed') {
              const file = await download(s, () =>
                s.page.getByRole('link', { name: 'Download the signed document' }).click(),
              );
              const path = join(space.dir, 'completed-by-link.pdf');
              await file.saveAs(path);
              // Cora's signature, and the seal on completion once its job has run: each one valid.
              const verdicts = await pdfsig(path);
              assert.ok(verdicts.length >= 1, 'signed');
              for (const v of verdicts) assert.equal(v.validation, 'Signature is Valid.', v.raw);
            }
          }
        });
      });
    },
  );
});
