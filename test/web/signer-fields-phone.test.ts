import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Request } from 'playwright-core';
import { writeMainFile } from '../helpers/documents.js';
import { PNG_1PX } from '../helpers/pdf.js';
import { aUser, OWNER } from '../helpers/people.js';
import { anExternalShare } from '../helpers/sharing.js';
import { useServer } from '../helpers/use-server.js';
import { tool, useWorkspace } from '../pdf/oracles.js';
import { ensureBuiltPage, hasChromium, inSession, launchChromium, type Session } from './browser.js';

/**
 * Issue 40, reproductions 3, 4, 6 and 8 on the signer's page: optional stamp and image fields shown and
 * filled, progress kept across a reload for the tab, field chips a finger can use and read on a phone
 * (with a readable mode for the document's text), and the words of unlocking, delegating and rejecting.
 */
describe('the signer’s page: stamp and image fields, progress across reloads, phone chips, words (issue 40)', () => {
  before(() => ensureBuiltPage());
  const server = useServer(() => ({ smtp: true }));
  const space = useWorkspace();
  let owner: string;
  before(async () => {
    owner = (await aUser(server, OWNER)).token;
  });
  const lines = [
    'This agreement is made between the parties named below.',
    'The customer orders the number of seats written here.',
    'I agree to the terms of service and the privacy notice.',
    'Signed in good faith.',
  ];
  const link = (token: string) => `${server.url}/s/${token}`;
  const at = (page: number, x: number, y: number, w: number, h: number) => ({
    pages: [page],
    position: { percentX: x, percentY: y, percentWidth: w, percentHeight: h },
  });
  const phone = { deviceScaleFactor: 3 };

  describe(
    'in headless Chromium',
    { skip: hasChromium ? false : 'Debian’s chromium is not installed' },
    () => {
      let browser: Browser;
      before(async () => {
        browser = await launchChromium();
      });
      after(async () => {
        await browser?.close();
      });

      async function waitForPdf(s: Session): Promise<void> {
        await s.page.locator('.viewer[data-state="ready"]').waitFor();
        await s.page.locator('.page[data-rendered]').first().waitFor();
        await s.settle();
      }

      /** Types a signature (or initials) in the field's dialog. */
      async function typeInto(s: Session, field: RegExp, tab: string, text: string): Promise<void> {
        await s.page.getByRole('button', { name: field }).first().click();
        await s.page.getByRole('tab', { name: 'Type' }).click();
        await s.page.getByRole('textbox', { name: tab }).fill(text);
        await s.page.getByRole('button', { name: 'Use it' }).click();
        await s.page.locator('dialog').waitFor({ state: 'detached' });
      }

      it('optional stamp and image fields are shown at their place on a phone, filled with a PNG, sent with their fieldId and position, and drawn there in the signed PDF (reproduction 3)', async () => {
        const email = 'stamp-phone@example.org';
        const {
          id,
          link: token,
          shares,
        } = await anExternalShare(server, owner, {
          title: 'Order with a stamp',
          pdf: { pages: 1, lines },
          email,
          share: {
            signatureFields: [
              { type: 'signature', user: [email], required: true, order: 1, ...at(1, 0.55, 0.8, 0.35, 0.08) },
              { type: 'stamp', user: [email], required: false, order: 2, ...at(1, 0.1, 0.55, 0.3, 0.12) },
              { type: 'image', user: [email], required: false, order: 3, ...at(1, 0.6, 0.55, 0.3, 0.12) },
            ],
          },
        });
        const fieldIds = (shares[0].signatureFields as { type: string; fieldId: string }[]).map((f) => [
          f.type,
          f.fieldId,
        ]);
        const idOf = (type: string) => fieldIds.find(([t]) => t === type)?.[1];
        await inSession(
          browser,
          'fields-stamp-image-phone',
          'phone',
          async (s) => {
            let body: Record<string, { fieldId?: string; type?: string; position: unknown }[]> = {};
            s.page.on('request', (request: Request) => {
              if (request.method() === 'PUT' && request.url().includes('/share/document/sign/'))
                body = request.postDataJSON();
            });
            await s.page.goto(link(token));
            await waitForPdf(s);
            const stamp = s.page.getByRole('button', { name: /^Stamp, optional, page 1/ });
            const image = s.page.getByRole('button', { name: /^Image, optional, page 1/ });
            await stamp.waitFor();
            await image.waitFor();
            await s.page.locator('.progress', { hasText: '0 of 3 fields completed' }).waitFor();
            await s.capture('stamp-image-shown');
            for (const [button, title] of [
              [stamp, 'Add your stamp'],
              [image, 'Add an image'],
            ] as const) {
              await button.click();
              await s.page.getByRole('heading', { name: title }).waitFor();
              await s.page
                .getByLabel(/Image \(PNG or JPEG\)/)
                .setInputFiles({ name: 'mark.png', mimeType: 'image/png', buffer: PNG_1PX });
              await s.capture(`${title.split(' ')[2]}-dialog`);
              await s.page.getByRole('button', { name: 'Add', exact: true }).click();
              await s.page.locator('dialog').waitFor({ state: 'detached' });
            }
            await s.page.getByRole('button', { name: /^Stamp, done/ }).waitFor();
            await s.page.getByRole('button', { name: /^Image, done/ }).waitFor();
            await s.capture('stamp-image-filled');
            await typeInto(s, /^Signature, required/, 'Your full name', 'Stella Stamp');
            // The consent before signing (issue 40).
            await s.page
              .getByRole('checkbox', {
                name: 'I have read this statement and I agree to sign electronically.',
              })
              .check();
            await s.page.getByRole('button', { name: 'Sign the document' }).click();
            await s.page.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
            const stampEntry = body.signatures?.find((e) => e.type === 'stamp');
            assert.equal(stampEntry?.fieldId, idOf('stamp'), 'the stamp names its field');
            assert.deepEqual(stampEntry?.position, at(1, 0.1, 0.55, 0.3, 0.12).position);
            assert.equal(body.signatures?.find((e) => e.type === 'signature')?.fieldId, idOf('signature'));
            assert.equal(body.images?.[0]?.fieldId, idOf('image'), 'the image names its field');
            assert.deepEqual(body.images?.[0]?.position, at(1, 0.6, 0.55, 0.3, 0.12).position);
          },
          phone,
        );
        // In the signed PDF, each picture stands inside its field's box (MuPDF's trace of page 1, in
        // points from the top left of a 612×792 page).
        const path = await writeMainFile(server, owner, id, space);
        const trace = await tool('mutool', ['draw', '-F', 'trace', '-o', '-', path, '1']);
        const [width, height] = [612, 792];
        const boxes = [...trace.matchAll(/<fill_image [^>]*transform="([\d.\s-]+)"/g)].map((m) => {
          const [a, , , d, e, f] = m[1]!.trim().split(/\s+/).map(Number);
          return [e!, f!, e! + a!, f! + d!];
        });
        const inside = (x: number, y: number, w: number, h: number) =>
          boxes.some(
            ([x0, y0, x1, y1]) =>
              x0! >= x * width - 1 &&
              x1! <= (x + w) * width + 1 &&
              y0! >= y * height - 1 &&
              y1! <= (y + h) * height + 1,
          );
        assert.ok(inside(0.1, 0.55, 0.3, 0.12), `the stamp in its box: ${JSON.stringify(boxes)}`);
        assert.ok(inside(0.6, 0.55, 0.3, 0.12), `the image in its box: ${JSON.stringify(boxes)}`);
      });

      /** A share of eight fields, with labels that were cut on phones (issue 40, reproduction 6). */
      const eightFields = (email: string) =>
        anExternalShare(server, owner, {
          title: `Seats order (${email})`,
          pdf: { pages: 1, lines },
          email,
          recipient: { dateFormat: 'yyyy-MM-dd' },
          share: {
            signatureFields: [
              {
                type: 'annotation',
                subtype: 'annotation_generic',
                tooltip: 'Company',
                user: [email],
                required: true,
                order: 1,
                ...at(1, 0.1, 0.15, 0.3, 0.03),
              },
              {
                type: 'annotation',
                subtype: 'annotation_number',
                tooltip: 'Number of seats',
                config: JSON.stringify({ min: 1, max: 500, decimals: 0 }),
                user: [email],
                required: true,
                order: 2,
                ...at(1, 0.1, 0.22, 0.1, 0.025),
              },
              {
                type: 'annotation',
                subtype: 'annotation_date',
                tooltip: 'Start date',
                user: [email],
                required: true,
                order: 3,
                ...at(1, 0.6, 0.22, 0.1, 0.025),
              },
              {
                type: 'annotation',
                subtype: 'annotation_checkbox',
                tooltip: 'I agree to the terms',
                user: [email],
                required: true,
                order: 4,
                ...at(1, 0.04, 0.3, 0.025, 0.015),
              },
              {
                type: 'annotation',
                subtype: 'annotation_generic',
                tooltip: 'City',
                user: [email],
                required: true,
                order: 5,
                ...at(1, 0.1, 0.4, 0.3, 0.03),
              },
              { type: 'initials', user: [email], required: true, order: 6, ...at(1, 0.05, 0.9, 0.06, 0.03) },
              {
                type: 'annotation',
                subtype: 'annotation_generic',
                tooltip: 'Notes',
                user: [email],
                required: true,
                order: 7,
                ...at(1, 0.5, 0.4, 0.3, 0.03),
              },
              { type: 'signature', user: [email], required: true, order: 8, ...at(1, 0.55, 0.8, 0.35, 0.08) },
            ],
          },
        });

      async function fill(s: Session, field: RegExp, label: RegExp, value: string): Promise<void> {
        await s.page.getByRole('button', { name: field }).click();
        await s.page.getByRole('dialog').getByLabel(label).fill(value);
        await s.page.getByRole('button', { name: 'Save', exact: true }).click();
        await s.page.locator('dialog').waitFor({ state: 'detached' });
      }

      it('a reload keeps what was typed, checked and drawn for the tab: 5 of 8 stays 5 of 8 with the same values, in sessionStorage only, cleared once signed (reproduction 4)', async () => {
        const { link: token } = await eightFields('reload@example.org');
        await inSession(browser, 'fields-progress-reload', 'desktop', async (s) => {
          await s.page.goto(link(token));
          await waitForPdf(s);
          // The date starts as today: 1 of 8.
          await s.page.locator('.progress', { hasText: '1 of 8 fields completed' }).waitFor();
          await fill(s, /^Text field, required, page 1\. Company/, /^Text/, 'ACME GmbH');
          await fill(s, /^Number, required, page 1\. Number of seats/, /Number of seats/, '12');
          await s.page.getByRole('checkbox', { name: /^Checkbox, required, page 1\. I agree/ }).check();
          await typeInto(s, /^Initials, required/, 'Your initials', 'AG');
          await s.page.locator('.progress', { hasText: '5 of 8 fields completed' }).waitFor();
          const kept = await s.page.evaluate<{ session: string[]; local: number; cookie: string }>(
            `({ session: Object.keys(sessionStorage), local: localStorage.length, cookie: document.cookie })`,
          );
          assert.ok(
            kept.session.some((k) => k.startsWith('signery.progress.')),
            'kept in sessionStorage',
          );
          assert.equal(kept.cookie, '', 'no cookie');
          const localKeys = await s.page.evaluate<string[]>(`Object.keys(localStorage)`);
          assert.ok(!localKeys.some((k) => k.includes('progress')), 'nothing in localStorage');
          const idb = await s.page.evaluate<number>(`indexedDB.databases().then((d) => d.length)`);
          assert.equal(idb, 0, 'nothing in IndexedDB');

          await s.page.reload();
          await waitForPdf(s);
          await s.page.locator('.progress', { hasText: '5 of 8 fields completed' }).waitFor();
          await s.page
            .getByRole('button', { name: /^Text field, done, page 1\. Company\. ACME GmbH$/ })
            .waitFor();
          await s.page
            .getByRole('button', { name: /^Number, done, page 1\. Number of seats\. 12$/ })
            .waitFor();
          assert.equal(
            await s.page.getByRole('checkbox', { name: /^Checkbox, done, page 1\. I agree/ }).isChecked(),
            true,
          );
          await s.page.getByRole('button', { name: /^Initials, done/ }).waitFor();
          assert.equal(await s.page.locator('.field--initials img').count(), 1, 'the initials drawn again');
          await s.capture('after-reload');

          await fill(s, /^Text field, required, page 1\. City/, /^Text/, 'Berlin');
          await fill(s, /^Text field, required, page 1\. Notes/, /^Text/, 'None');
          await typeInto(s, /^Signature, required/, 'Your full name', 'Anna Gruber');
          // The consent before signing (issue 40).
          await s.page
            .getByRole('checkbox', { name: 'I have read this statement and I agree to sign electronically.' })
            .check();
          await s.page.getByRole('button', { name: 'Sign the document' }).click();
          await s.page.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
          const left = await s.page.evaluate<string[]>(`Object.keys(sessionStorage)`);
          assert.ok(!left.some((k) => k.startsWith('signery.progress.')), 'cleared once signed');
        });
      });

      it('on a phone (390×844, touch, 3×) and a desktop: every label readable and uncut, checkboxes labelled above their box, tap targets at least 44×44, and a readable mode for the text that leads back to the fields (reproduction 6)', async () => {
        for (const size of ['phone', 'desktop'] as const) {
          const { link: token } = await eightFields(`chips-${size}@example.org`);
          await inSession(
            browser,
            `fields-chips-${size}`,
            size,
            async (s) => {
              await s.page.goto(link(token));
              await waitForPdf(s);
              await fill(s, /^Date, done, page 1\. Start date/, /Start date/, '2026-12-01');
              await s.page.getByRole('button', { name: /^Date, done.*2026-12-01$/ }).waitFor();
              await s.settle();
              const seen = await s.page.evaluate<
                { name: string; width: number; height: number; cut: boolean; lines: number }[]
              >(`[...document.querySelectorAll('button.field, .field-check')].map((target) => {
              const r = target.getBoundingClientRect();
              const text = target.querySelector('.field-text, .field-caption');
              const t = text ? text.getBoundingClientRect() : undefined;
              const lineHeight = text ? parseFloat(getComputedStyle(text).lineHeight) || 16 : 16;
              // Cut: the text is wider than what shows of it, or the box clips it.
              const clipped = text && getComputedStyle(target).overflow === 'hidden' &&
                (t.left < r.left - 1 || t.right > r.right + 1 || t.top < r.top - 1 || t.bottom > r.bottom + 1);
              return {
                name: (target.getAttribute('aria-label') || target.querySelector('input')?.getAttribute('aria-label') || '').slice(0, 40),
                width: r.width,
                height: r.height,
                cut: Boolean(text && (text.scrollWidth > Math.ceil(t.width) + 1 || clipped)),
                lines: t ? Math.round(t.height / lineHeight) : 0,
              };
            })`);
              assert.equal(seen.length, 8);
              for (const target of seen) {
                assert.ok(
                  target.width >= 44 && target.height >= 44,
                  `${target.name}: ${target.width}×${target.height}`,
                );
                assert.equal(target.cut, false, `${target.name}: its label is cut`);
                assert.ok(target.lines <= 1, `${target.name}: its label on one line (${target.lines})`);
              }
              // The checkbox's caption is visible, above its box: the clause beside it stays uncovered.
              const check = await s.page.evaluate<{ caption: string; above: boolean }>(`(() => {
            const target = document.querySelector('.field-check');
            const caption = target.querySelector('.field-caption');
            const box = target.querySelector('input').getBoundingClientRect();
            return { caption: caption.textContent, above: caption.getBoundingClientRect().bottom <= box.top + 1 };
          })()`);
              assert.deepEqual(check, { caption: 'I agree to the terms', above: true });
              await s.capture('phone-chips');

              // The readable mode: the text at the page's own size, the fields listed where they stand.
              await s.page.getByRole('button', { name: 'Read as text' }).click();
              await s.page.getByRole('button', { name: 'Read as text', pressed: true }).waitFor();
              const text = s.page.locator('.readable-text');
              await text.waitFor();
              await text.getByText(/This agreement is made between the parties named below\./).waitFor();
              const size = await s.page.evaluate<number>(
                `parseFloat(getComputedStyle(document.querySelector('.readable-text p')).fontSize)`,
              );
              assert.ok(size >= 16, `readable at ${size}px`);
              assert.equal(await s.page.locator('.pages').isHidden(), true, 'in place of the pages');
              const chips = text.getByRole('button', { name: /: go to the field$/ });
              assert.equal(await chips.count(), 8);
              const order = await chips.allInnerTexts();
              assert.match(order[0] ?? '', /^Company \(required\): go to the field$/);
              const tapHeight = await chips.first().evaluate((b) => b.getBoundingClientRect().height);
              assert.ok(tapHeight >= 44, `chip ${tapHeight}px high`);
              await s.capture('readable-mode');
              await text.getByRole('button', { name: /^City \(required\): go to the field$/ }).click();
              await text.waitFor({ state: 'detached' });
              await s.expectFocus(/^Text field, required, page 1\. City/);
              await s.page.getByRole('button', { name: 'Read as text', pressed: false }).waitFor();
            },
            size === 'phone' ? phone : {},
          );
        }
      });

      it('the words: the unlock screen names the document and its sender with focus in the password; a self-delegation says so; a delegation is headed “Passed on to …”; an empty reason asks once (reproduction 8)', async () => {
        const email = 'words@example.org';
        const { link: token } = await anExternalShare(server, owner, {
          title: 'Lease 2027',
          pdf: { pages: 1, lines },
          email,
          recipient: { password: 'lease-password-1', rights: ['delegate'] },
        });
        // The pre-unlock call answers what the invitation said already.
        const locked = await server.api('GET', '/share/oidc', { token });
        assert.equal(locked.status, 200);
        assert.equal(locked.body.documentTitle, 'Lease 2027');
        assert.equal(locked.body.sharedBy, 'Olivia Owner');
        for (const size of ['phone', 'desktop'] as const)
          await inSession(
            browser,
            `fields-words-${size}`,
            size,
            async (s) => {
              await s.page.goto(link(token));
              await s.page.getByRole('heading', { name: 'Confirm that it is you' }).waitFor();
              await s.page.getByText('“Lease 2027”, sent by Olivia Owner').waitFor();
              await s.expectFocus('Password');
              await s.capture('unlock-named');
              await s.page.keyboard.type('lease-password-1');
              await s.page.keyboard.press('Enter');
              await waitForPdf(s);

              // Rejecting without a reason is asked once, not forced.
              await s.page.getByRole('button', { name: 'Reject', exact: true }).click();
              await s.page.getByRole('dialog').getByRole('button', { name: 'Reject the document' }).click();
              await s.page.getByText(/^Reject without giving a reason\?/).waitFor();
              await s.capture('reject-ask-reason');
              await s.page.getByRole('button', { name: 'Cancel' }).click();
              await s.page.locator('dialog').waitFor({ state: 'detached' });

              // Delegating to oneself says what is wrong.
              await s.page.getByRole('button', { name: 'Delegate' }).click();
              await s.page.getByLabel(/Their e-mail address/).fill(email.toUpperCase());
              await s.page.getByRole('dialog').getByRole('button', { name: 'Delegate' }).click();
              await s.page.getByText(/^That is your own address/).waitFor();
              await s.capture('self-delegation');
              await s.page.getByRole('button', { name: 'Cancel' }).click();
              await s.page.locator('dialog').waitFor({ state: 'detached' });
            },
            size === 'phone' ? phone : {},
          );
        // Passing it on: the confirmation says to whom.
        await inSession(
          browser,
          'fields-words-delegated',
          'phone',
          async (s) => {
            await s.page.goto(link(token));
            await s.expectFocus('Password');
            await s.page.keyboard.type('lease-password-1');
            await s.page.keyboard.press('Enter');
            await waitForPdf(s);
            await s.page.getByRole('button', { name: 'Delegate' }).click();
            await s.page.getByLabel(/Their e-mail address/).fill('colleague@example.org');
            await s.page.getByRole('dialog').getByRole('button', { name: 'Delegate' }).click();
            await s.page.getByRole('heading', { name: 'Passed on to colleague@example.org' }).waitFor();
            await s.capture('delegated');
          },
          phone,
        );
      });
    },
  );
});
