import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Request } from 'playwright-core';
import { SIGNER_PAGE_CSP } from '../../src/http/routes/signer-page.js';
import { LANGUAGES } from '../../web/src/i18n.js';
import { PREPARE_LANGUAGES } from '../../web/src/prepare/texts.js';
import { aDocument, writeMainFile } from '../helpers/documents.js';
import { makePdf } from '../helpers/pdf.js';
import { aUser, OWNER } from '../helpers/people.js';
import { mustSucceed } from '../helpers/server.js';
import { linkOf } from '../helpers/sharing.js';
import { useServer } from '../helpers/use-server.js';
import { hasTool, pdfsig, tool, useWorkspace } from '../pdf/oracles.js';
import { ensureBuiltPage, hasChromium, inSession, launchChromium, type Session } from './browser.js';

/** A box on a page in fractions of it (spec Position: origin top left). */
interface Box {
  percentX: number;
  percentY: number;
  percentWidth: number;
  percentHeight: number;
}

/** A word pdftotext found, its box in fractions of its page. */
interface Word extends Box {
  page: number;
  text: string;
}

/** Where pdftotext -bbox finds each word of the PDF, in fractions of its page (top left origin). */
async function wordsOf(path: string): Promise<Word[]> {
  const html = await tool('pdftotext', ['-bbox', path, '-']);
  const words: Word[] = [];
  let page = 0;
  for (const pageMatch of html.matchAll(/<page width="([\d.]+)" height="([\d.]+)">([\s\S]*?)<\/page>/g)) {
    page += 1;
    const width = Number(pageMatch[1]);
    const height = Number(pageMatch[2]);
    for (const w of (pageMatch[3] ?? '').matchAll(
      /<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g,
    )) {
      const [x0, y0, x1, y1] = [w[1], w[2], w[3], w[4]].map(Number) as [number, number, number, number];
      words.push({
        page,
        text: w[5] ?? '',
        percentX: x0 / width,
        percentY: y0 / height,
        percentWidth: (x1 - x0) / width,
        percentHeight: (y1 - y0) / height,
      });
    }
  }
  return words;
}

/** The word lies inside the box drawn for it (within `slack` of the page on each side). */
function assertInside(word: Word | undefined, box: Box, what: string, slack = 0.01): void {
  assert.ok(word, `${what}: pdftotext finds it`);
  const inside =
    word.percentX >= box.percentX - slack &&
    word.percentY >= box.percentY - slack &&
    word.percentX + word.percentWidth <= box.percentX + box.percentWidth + slack &&
    word.percentY + word.percentHeight <= box.percentY + box.percentHeight + slack;
  assert.ok(inside, `${what} at ${JSON.stringify(word)} is inside the drawn box ${JSON.stringify(box)}`);
}

function assertSameBox(actual: Box, expected: Box, what: string, tolerance = 0.002): void {
  for (const key of ['percentX', 'percentY', 'percentWidth', 'percentHeight'] as const) {
    assert.ok(
      Math.abs(actual[key] - expected[key]) <= tolerance,
      `${what}.${key}: ${actual[key]} in the body, ${expected[key]} drawn on the screen`,
    );
  }
}

describe('the prepare page (/prepare): a sender draws a share’s fields on the PDF and sends it (issue 40, item 9)', () => {
  before(() => ensureBuiltPage());
  const server = useServer({ smtp: true });
  const space = useWorkspace();
  let owner: string;
  let apiKey: string;
  before(async () => {
    owner = (await aUser(server, OWNER)).token;
    apiKey = mustSucceed(
      await server.api('POST', '/api/key', { token: owner, body: { description: 'prepare page' } }),
      'POST /api/key',
    ).body.id as string;
  });
  const lines = ['This agreement is made between the parties named below.', 'Signed in good faith.'];

  it('GET /prepare and /prepare/:id answer the built page with the signer page’s policy, no-referrer and no-store; nothing inline', async () => {
    for (const path of ['/prepare', '/prepare/3f1c0b5e-0000-4000-8000-000000000000']) {
      const response = await fetch(`${server.url}${path}`);
      assert.equal(response.status, 200, path);
      assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
      assert.equal(response.headers.get('content-security-policy'), SIGNER_PAGE_CSP);
      assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.equal(response.headers.get('x-frame-options'), 'DENY');
      const html = await response.text();
      assert.match(html, /<script[^>]*src="\/web\/assets\/prepare-[\w-]{8}\.js"/);
      assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
      assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i, 'no inline style or handler');
    }
  });

  it('the service’s home page leads to it', async () => {
    const home = await (await fetch(`${server.url}/`)).text();
    assert.match(home, /<a href="\/prepare">/);
  });

  it('speaks every language of the signer’s page', () => {
    assert.deepEqual([...PREPARE_LANGUAGES].sort(), Object.keys(LANGUAGES).sort());
  });

  describe(
    'in headless Chromium (Debian’s chromium driven by playwright-core)',
    { skip: hasChromium ? false : 'Debian’s chromium is not installed at /usr/bin/chromium' },
    () => {
      let browser: Browser;
      before(async () => {
        browser = await launchChromium();
      });
      after(async () => {
        await browser?.close();
      });

      async function waitForPdf(s: Session): Promise<void> {
        const viewer = s.page.locator('.viewer[data-state="ready"], .viewer[data-state="failed"]');
        await viewer.waitFor();
        if ((await viewer.getAttribute('data-state')) === 'failed')
          throw new Error(await s.page.locator('.viewer [role="alert"]').innerText());
        await s.page.locator('.page[data-rendered]').first().waitFor();
        await s.settle();
      }

      async function signIn(s: Session): Promise<void> {
        await s.page.getByRole('heading', { name: 'Sign in' }).waitFor();
        await s.capture('sign-in');
        await s.page.getByLabel('User name').fill('owner');
        await s.page.getByLabel('Password').fill('user-password-1');
        await s.page.getByRole('button', { name: 'Sign in' }).click();
      }

      async function addRecipient(s: Session, shareTo: string): Promise<void> {
        await s.page.getByLabel('E-mail or user name').fill(shareTo);
        await s.page.getByRole('button', { name: 'Add recipient' }).click();
        await s.page.locator('.prepare-recipient', { hasText: shareTo }).waitFor();
      }

      /**
       * Chooses the field type, presses "Draw on the page", and drags from `from` to `to` (fractions
       * of the page) with the mouse or a finger, at the screen coordinates those fractions have: the
       * drawn box, as read back from the screen (the page's box and the pointer's points), in
       * fractions of the page.
       */
      async function drawField(
        s: Session,
        kind: string,
        from: { x: number; y: number },
        to: { x: number; y: number },
        pointer: 'mouse' | 'touch',
        page = 1,
      ): Promise<Box> {
        await s.page.getByLabel('Field type').selectOption({ label: kind });
        const draw = s.page.getByRole('button', { name: 'Draw on the page' });
        // Buttons are clicked (a synthetic tap right after a synthetic touch drag is at times taken
        // as part of one gesture by Chromium, and gives no click); the fields are drawn by touch.
        await draw.click();
        assert.equal(await draw.getAttribute('aria-pressed'), 'true');
        // The part of the page to draw on, in the middle of the document's view.
        const pageBox = s.page.locator(`.page[data-page="${page}"]`);
        await s.page.locator('.viewer').scrollIntoViewIfNeeded();
        await s.page.evaluate(`(() => {
          const page = document.querySelector('.page[data-page="${page}"]');
          const scroller = page.closest('.viewer-scroll');
          const box = page.getBoundingClientRect();
          const view = scroller.getBoundingClientRect();
          scroller.scrollTop += box.top + box.height * ${(from.y + to.y) / 2} - (view.top + view.height / 2);
        })()`);
        await s.settle();
        const box = await pageBox.boundingBox();
        assert.ok(box);
        const start = { x: box.x + box.width * from.x, y: box.y + box.height * from.y };
        const end = { x: box.x + box.width * to.x, y: box.y + box.height * to.y };
        const steps = Array.from({ length: 8 }, (_, i) => ({
          x: start.x + ((end.x - start.x) * (i + 1)) / 8,
          y: start.y + ((end.y - start.y) * (i + 1)) / 8,
        }));
        if (pointer === 'mouse') {
          await s.page.mouse.move(start.x, start.y);
          await s.page.mouse.down();
          for (const p of steps) await s.page.mouse.move(p.x, p.y);
          await s.page.mouse.up();
        } else {
          const cdp = await s.context.newCDPSession(s.page);
          const touch = (type: 'touchStart' | 'touchMove' | 'touchEnd', p?: { x: number; y: number }) =>
            cdp.send('Input.dispatchTouchEvent', { type, touchPoints: p ? [{ x: p.x, y: p.y }] : [] });
          await touch('touchStart', start);
          for (const p of steps) await touch('touchMove', p);
          await touch('touchEnd');
          await cdp.detach();
        }
        await s.page.locator('.prepare-field--selected').waitFor();
        assert.equal(await draw.getAttribute('aria-pressed'), 'false', 'one field per press');
        return {
          percentX: (Math.min(start.x, end.x) - box.x) / box.width,
          percentY: (Math.min(start.y, end.y) - box.y) / box.height,
          percentWidth: Math.abs(end.x - start.x) / box.width,
          percentHeight: Math.abs(end.y - start.y) / box.height,
        };
      }

      /**
       * The scenario of item 9, from the document to the signed PDF: a signature, a text field and a
       * read-only text for one recipient, drawn at known points; the copied body's fractions match
       * the drawn boxes; Send; the recipient signs from their e-mail link; the signed PDF has the
       * texts inside the drawn boxes (pdftotext -bbox) and a valid signature (pdfsig).
       */
      async function prepareSendAndSign(
        s: Session,
        options: { id: string; recipient: string; pointer: 'mouse' | 'touch' },
      ): Promise<void> {
        const { id, recipient, pointer } = options;
        await s.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
        await waitForPdf(s);
        await s.capture('editor-opened');
        await addRecipient(s, recipient);
        await s.capture('recipient-added');

        const signatureBox = await drawField(
          s,
          'Signature',
          { x: 0.55, y: 0.62 },
          { x: 0.9, y: 0.7 },
          pointer,
        );
        await s.capture('signature-drawn');
        const textBox = await drawField(s, 'Text', { x: 0.1, y: 0.5 }, { x: 0.45, y: 0.545 }, pointer);
        const readOnlyBox = await drawField(
          s,
          'Read-only text',
          { x: 0.1, y: 0.38 },
          { x: 0.7, y: 0.42 },
          pointer,
        );
        // Drawn, the read-only text asks for its text at once.
        await s.expectFocus('Text shown on the document');
        await s.page.keyboard.type('Customer ref: ACME-2026-17');
        await s.page.locator('.prepare-field', { hasText: 'Customer ref: ACME-2026-17' }).waitFor();
        await s.capture('fields-drawn');

        // The keyboard moves the selected field: Right then Left leaves it where it was drawn.
        const readOnlyField = s.page.getByRole('button', { name: /^Read-only text for .*: Customer ref/ });
        await readOnlyField.focus();
        const position = s.page.locator('.prepare-position');
        const before = await position.innerText();
        await s.page.keyboard.press('ArrowRight');
        assert.notEqual(await position.innerText(), before, 'an arrow key moves the field');
        await s.page.keyboard.press('ArrowLeft');
        assert.equal(await position.innerText(), before);

        const copy = s.page.getByRole('button', { name: 'Copy JSON' });
        await copy.click();
        await s.page.getByText('The JSON body is copied to the clipboard.').waitFor();
        const shown = await s.page.getByLabel('The body of POST /api/v1/share').inputValue();
        assert.equal(await s.page.evaluate('navigator.clipboard.readText()'), shown, 'the clipboard has it');
        await s.capture('json-copied');
        const body = JSON.parse(shown) as {
          id: string;
          objectType: string;
          data: unknown[];
          signatureFields: (Record<string, unknown> & { position: Box })[];
        };
        assert.equal(body.id, id);
        assert.equal(body.objectType, 'document');
        assert.deepEqual(body.data, [{ sharePurpose: 'sign', shareTo: recipient }]);
        const [signature, text, readOnly] = body.signatureFields;
        assert.ok(signature && text && readOnly);
        assert.equal(body.signatureFields.length, 3);
        const { position: signaturePosition, ...signatureRest } = signature;
        assert.deepEqual(signatureRest, { type: 'signature', user: [recipient], pages: [1], required: true });
        const { position: textPosition, ...textRest } = text;
        assert.deepEqual(textRest, {
          type: 'annotation',
          subtype: 'annotation_generic',
          user: [recipient],
          pages: [1],
          required: true,
        });
        const { position: readOnlyPosition, ...readOnlyRest } = readOnly;
        assert.deepEqual(readOnlyRest, {
          type: 'annotation',
          subtype: 'annotation_generic',
          user: [recipient],
          pages: [1],
          required: false,
          readOnly: true,
          text: 'Customer ref: ACME-2026-17',
        });
        // The position math: the body's fractions are the boxes drawn on the screen.
        assertSameBox(signaturePosition, signatureBox, 'signature');
        assertSameBox(textPosition, textBox, 'text');
        assertSameBox(readOnlyPosition, readOnlyBox, 'read-only text');

        let sent: unknown;
        s.page.on('request', (request: Request) => {
          if (request.method() === 'POST' && request.url().endsWith('/api/v1/share'))
            sent = request.postDataJSON();
        });
        const send = s.page.getByRole('button', { name: 'Send', exact: true });
        await send.click();
        await s.page.getByText(`Sent to ${recipient}.`).waitFor();
        assert.deepEqual(sent, body, 'Send posts exactly the copied body');
        assert.equal(await send.isDisabled(), true, 'sent once');
        await s.capture('sent');

        // The recipient signs on the signer's page, from the link in their invitation.
        const link = await linkOf(server.smtp, recipient);
        await inSession(browser, `prepare-recipient-${s.size}`, s.size, async (r) => {
          await r.page.goto(`${server.url}/s/${link}`);
          await waitForPdf(r);
          await r.page
            .getByRole('button', { name: /^Text field, required/ })
            .first()
            .click();
          await r.page.getByRole('textbox', { name: 'Text (required)' }).fill('Berlin');
          await r.page.keyboard.press('Enter');
          await r.page.getByRole('button', { name: /^Text field, done/ }).waitFor();
          await r.page
            .getByRole('button', { name: /^Signature, required/ })
            .first()
            .click();
          const pad = r.page.getByRole('img', { name: /Drawing area/ });
          await pad.waitFor();
          const padBox = await pad.boundingBox();
          assert.ok(padBox);
          await r.draw(padBox, pointer);
          await r.page.getByRole('button', { name: 'Use it' }).click();
          await r.page
            .getByRole('button', { name: /^Signature, done/ })
            .first()
            .waitFor();
          // The consent before signing (issue 40).
          await r.page
            .getByRole('checkbox', { name: 'I have read this statement and I agree to sign electronically.' })
            .check();
          await r.page.getByRole('button', { name: 'Sign the document' }).click();
          await r.page.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
        });

        // The signed PDF, through the API: the texts where they were drawn, and a valid signature.
        const signed = await writeMainFile(server, owner, id, space);
        if (hasTool('pdftotext')) {
          const words = await wordsOf(signed);
          const word = (w: string) => words.find((x) => x.page === 1 && x.text === w);
          assertInside(word('Customer'), readOnlyPosition, 'the read-only text');
          assertInside(word('ACME-2026-17'), readOnlyPosition, 'the read-only text');
          assertInside(word('Berlin'), textPosition, 'the typed text');
        }
        if (hasTool('pdfsig')) {
          const verdicts = await pdfsig(signed);
          assert.ok(verdicts.length >= 1, 'pdfsig finds the signature');
          for (const v of verdicts) assert.equal(v.validation, 'Signature is Valid.', v.raw);
        }
      }

      it('on a desktop, signed in: upload a PDF, draw a signature, a text and a read-only text with the mouse, copy the JSON (the drawn fractions), send; the recipient signs, and the signed PDF has the texts where drawn (pdftotext) and a valid signature (pdfsig)', async () => {
        const pdf = join(space.dir, 'lease.pdf');
        await writeFile(pdf, makePdf({ pages: 2, lines }));
        await inSession(browser, 'prepare-desktop-session', 'desktop', async (s) => {
          await s.page.goto(`${server.url}/prepare`);
          await signIn(s);
          await s.page.getByRole('heading', { name: 'Prepare a document' }).waitFor();
          await s.capture('documents');
          await s.page.getByLabel('PDF file').setInputFiles(pdf);
          await s.page.getByLabel('Title (optional)').fill('Lease of the workshop');
          await s.page.getByRole('button', { name: 'Upload and open' }).click();
          await s.page.getByRole('heading', { name: 'Lease of the workshop' }).waitFor();
          const id = /\/prepare\/([0-9a-f-]{36})$/.exec(s.page.url())?.[1];
          assert.ok(id, `the address names the new document: ${s.page.url()}`);
          await prepareSendAndSign(s, { id, recipient: 'anna@example.org', pointer: 'mouse' });
        });
      });

      it('on a phone, with an API key, by touch: open a document by id, draw the fields with a finger, copy the JSON (the drawn fractions), send; the recipient signs on their phone (pdftotext, pdfsig)', async () => {
        const id = await aDocument(server, owner, { title: 'Phone contract', pdf: { pages: 2, lines } });
        await inSession(browser, 'prepare-phone-key', 'phone', async (s) => {
          const calls: Request[] = [];
          s.page.on('request', (request) => {
            if (request.url().includes('/api/v1/')) calls.push(request);
          });
          await s.page.goto(`${server.url}/prepare`);
          await s.page.getByRole('heading', { name: 'Sign in' }).waitFor();
          await s.page.getByLabel('API key', { exact: true }).fill(apiKey);
          await s.page.getByRole('button', { name: 'Use this key' }).tap();
          await s.page.getByRole('heading', { name: 'Prepare a document' }).waitFor();
          await s.page.getByRole('link', { name: 'Phone contract' }).waitFor();
          await s.capture('documents');
          await s.page.getByLabel('Document id').fill(id);
          await s.page.getByRole('button', { name: 'Open', exact: true }).tap();
          await s.page.getByRole('heading', { name: 'Phone contract' }).waitFor();
          await prepareSendAndSign(s, { id, recipient: 'ben@example.org', pointer: 'touch' });
          // The key went in the Authorization header only: never in an address, kept for the tab.
          const keyed = calls.filter((c) => c.headers().authorization === `Bearer ${apiKey}`);
          assert.ok(
            keyed.some((c) => c.url().endsWith('/api/v1/share')),
            'POST /share with the key',
          );
          for (const c of calls) assert.doesNotMatch(c.url(), new RegExp(apiKey), 'no key in an address');
          assert.equal(
            await s.page.evaluate('sessionStorage.getItem("signery.prepare.apiKey")'),
            apiKey,
            'the key is kept for the tab',
          );
          assert.equal(
            await s.page.evaluate('localStorage.length'),
            1,
            'only the viewer’s code note outlives it',
          );
        });
      });

      it('a field moved and resized by the pointer, placed and deleted with the keyboard; a refusal of the API is shown as its message beside the field it names, and nothing is sent', async () => {
        const id = await aDocument(server, owner, { title: 'Viewer only', pdf: { pages: 1, lines } });
        await inSession(browser, 'prepare-refused', 'desktop', async (s) => {
          await s.page.goto(`${server.url}/prepare/${id}`);
          await signIn(s);
          await waitForPdf(s);
          await s.page.getByLabel('E-mail or user name').fill('vera@example.org');
          await s.page.getByLabel('Asked to').selectOption({ label: 'read' });
          await s.page.getByRole('button', { name: 'Add recipient' }).click();
          const drawn = await drawField(s, 'Signature', { x: 0.2, y: 0.3 }, { x: 0.5, y: 0.36 }, 'mouse');
          // Dragged by its body it moves, by its corner it is resized: by the pointer's way over the page.
          const position = async () => {
            const text = await s.page.locator('.prepare-position').innerText();
            const [x, y, w, h] = [...text.matchAll(/\d\.\d{4}/g)].map((m) => Number(m[0]));
            return { percentX: x, percentY: y, percentWidth: w, percentHeight: h } as Box;
          };
          const pageBox = await s.page.locator('.page[data-page="1"]').boundingBox();
          const fieldBox = await s.page.locator('.prepare-field--selected').boundingBox();
          assert.ok(pageBox && fieldBox);
          const drag = async (from: { x: number; y: number }, by: { x: number; y: number }) => {
            await s.page.mouse.move(from.x, from.y);
            await s.page.mouse.down();
            await s.page.mouse.move(from.x + by.x / 2, from.y + by.y / 2);
            await s.page.mouse.move(from.x + by.x, from.y + by.y);
            await s.page.mouse.up();
          };
          const by = { x: pageBox.width * 0.1, y: pageBox.height * 0.05 };
          await drag({ x: fieldBox.x + fieldBox.width / 3, y: fieldBox.y + fieldBox.height / 2 }, by);
          const moved = { ...drawn, percentX: drawn.percentX + 0.1, percentY: drawn.percentY + 0.05 };
          assertSameBox(await position(), moved, 'moved', 0.0015);
          const handle = await s.page.locator('.prepare-field--selected .prepare-handle').boundingBox();
          assert.ok(handle);
          await drag({ x: handle.x + handle.width / 2, y: handle.y + handle.height / 2 }, by);
          const resized = {
            ...moved,
            percentWidth: moved.percentWidth + 0.1,
            percentHeight: moved.percentHeight + 0.05,
          };
          assertSameBox(await position(), resized, 'resized', 0.0015);
          await s.capture('moved-and-resized');
          // The keyboard places a field too: in the middle of the page in view.
          await s.page.getByLabel('Field type').selectOption({ label: 'Checkbox' });
          await s.page.getByRole('button', { name: 'Draw on the page' }).focus();
          await s.page.keyboard.press('Enter');
          await s.expectFocus(/^Checkbox for vera@example.org, page 1/);
          await s.page.keyboard.press('Delete');
          await s.page.getByRole('button', { name: /^Checkbox for/ }).waitFor({ state: 'detached' });
          await s.page.getByRole('button', { name: 'Send', exact: true }).click();
          const message = s.page.locator('.prepare-section', { has: s.page.locator('#selected-title') });
          await message.getByText(/goes to a recipient asked to view, who would never see it/).waitFor();
          await s.page.getByText(/^Not sent: .*signatureFields\[0\]/).waitFor();
          assert.equal(await s.page.locator('.prepare-field--error').count(), 1);
          await s.capture('refused');
          const shares = await server.api('GET', `/documents/${id}`, { token: owner });
          assert.deepEqual(shares.body.results[0].waitingFor, [], 'nothing was shared');
        });
      });
    },
  );
});
