import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Request } from 'playwright-core';
import { ManualClock } from '../../src/base/clock.js';
import { DEFAULT_CONSENT_STATEMENTS } from '../../src/core/sharing/consent-statement.js';
import { consentRecords } from '../helpers/audit-log.js';
import { readDocument } from '../helpers/documents.js';
import { aUser, OWNER } from '../helpers/people.js';
import { anExternalShare, smsTextTo } from '../helpers/sharing.js';
import { decode } from '../helpers/smtp.js';
import { useServer } from '../helpers/use-server.js';
import { assertSignaturesValid, tool, useWorkspace } from '../pdf/oracles.js';
import { ensureBuiltPage, hasChromium, inSession, launchChromium, type Session } from './browser.js';

const DAY = 86_400_000;
const DOWNLOAD_DAYS = 2;
const REF = 'Customer ref: ACME-2026-17';
/** Where the read-only text is placed (spec Position: fractions of the page). */
const REF_AT = { percentX: 0.1, percentY: 0.2, percentWidth: 0.5, percentHeight: 0.05 };

/**
 * Issue 40, reproductions 1, 2 and 5; Deliver 1 and 2 (DESIGN "Decided this round"): "Before the final
 * sign action the signer page shows every visual that signing will stamp, and the signer accepts an
 * electronic-signature consent statement; the acceptance is an audit record with activity
 * `consentAccepted` (time, address, the statement's SHA-256)." and "After a recipient completes, their
 * link (or their recipient session) may download the documents they signed for
 * RECIPIENT_DOWNLOAD_DAYS".
 */
describe('the signer’s page: see what you sign, consent to sign electronically, keep what you signed', () => {
  const clock = new ManualClock(new Date());
  before(() => ensureBuiltPage());
  const server = useServer({
    smtp: true,
    clock,
    env: { RECIPIENT_DOWNLOAD_DAYS: String(DOWNLOAD_DAYS) },
  });
  const space = useWorkspace();
  let owner: string;
  before(async () => {
    owner = (await aUser(server, OWNER)).token;
  });
  const lines = ['This agreement is made between the parties named below.', 'Signed in good faith.'];
  const link = (token: string) => `${server.url}/s/${token}`;

  /** A share with a read-only text, a text to fill in and a signature, for `email`. */
  const aReviewShare = (title: string, email: string, recipient: Record<string, unknown> = {}) =>
    anExternalShare(server, owner, {
      title,
      pdf: { pages: 2, lines },
      email,
      recipient,
      share: {
        signatureFields: [
          { type: 'annotation', readOnly: true, text: REF, user: [email], pages: [1], position: REF_AT },
          {
            type: 'annotation',
            subtype: 'annotation_generic',
            user: [email],
            required: true,
            order: 1,
            pages: [1],
            position: { percentX: 0.1, percentY: 0.3, percentWidth: 0.4, percentHeight: 0.04 },
          },
          {
            type: 'signature',
            user: [email],
            order: 2,
            pages: [2],
            position: { percentX: 0.5, percentY: 0.8, percentWidth: 0.35, percentHeight: 0.06 },
          },
        ],
      },
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

      async function waitForPdf(s: Session): Promise<void> {
        const viewer = s.page.locator('.viewer[data-state="ready"], .viewer[data-state="failed"]');
        await viewer.waitFor();
        if ((await viewer.getAttribute('data-state')) === 'failed')
          throw new Error(await s.page.locator('.viewer [role="alert"]').innerText());
        await s.page.locator('.page[data-rendered]').first().waitFor();
      }

      async function download(s: Session, name = 'Download the signed PDF'): Promise<string> {
        const [file] = await Promise.all([
          s.page.waitForEvent('download'),
          s.page.getByRole('button', { name }).click(),
        ]);
        const path = join(space.dir, `${Date.now()}-${file.suggestedFilename()}`);
        await file.saveAs(path);
        return path;
      }

      /** The fields by pointer (touch on the phone, mouse on the desktop): the text, then the signature. */
      async function fillIn(s: Session): Promise<void> {
        await s.page.getByRole('button', { name: /^Text field, required/ }).click();
        await s.page.getByRole('dialog').getByRole('textbox').fill('Berlin');
        await s.page.getByRole('button', { name: 'Save', exact: true }).click();
        await s.page.locator('dialog').waitFor({ state: 'detached' });
        await s.page
          .getByRole('button', { name: /^Signature, required/ })
          .first()
          .click();
        const pad = s.page.getByRole('img', { name: /Drawing area/ });
        await pad.waitFor();
        const box = await pad.boundingBox();
        assert.ok(box);
        await s.draw(box, s.size === 'phone' ? 'touch' : 'mouse');
        await s.page.getByRole('button', { name: 'Use it' }).click();
        await s.page
          .getByRole('button', { name: /^Signature, done/ })
          .first()
          .waitFor();
      }

      const consentBox = (s: Session) =>
        s.page.getByRole('checkbox', {
          name: 'I have read this statement and I agree to sign electronically.',
        });

      /** Ticks the consent and signs: the confirmation. */
      async function consentAndSign(s: Session): Promise<void> {
        await consentBox(s).check();
        await s.page.getByRole('button', { name: 'Sign the document' }).click();
        await s.page.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
      }

      for (const size of ['phone', 'desktop'] as const) {
        it(`the read-only text is on the page before signing, where and as it is stamped; the review line; signing waits for the consent, which is recorded with its SHA-256 and address (${size})`, async () => {
          const title = `Review agreement (${size})`;
          const { id, link: token } = await aReviewShare(title, `review-${size}@example.org`);
          await inSession(browser, `review-${size}`, size, async (s) => {
            const calls: string[] = [];
            s.page.on('request', (request: Request) => {
              if (request.method() !== 'GET') calls.push(new URL(request.url()).pathname);
            });
            await s.page.goto(link(token));
            await s.page.getByRole('heading', { name: title }).waitFor();
            await waitForPdf(s);

            // Reproduction 2: the predefined text is visible before signing, at the field's place.
            const stamped = s.page.locator('.page[data-page="1"] .stamped-text', { hasText: REF });
            await stamped.waitFor();
            const pageBox = await s.page.locator('.page[data-page="1"] .page-overlay').boundingBox();
            const textBox = await stamped.boundingBox();
            assert.ok(pageBox && textBox);
            assert.ok(Math.abs((textBox.x - pageBox.x) / pageBox.width - REF_AT.percentX) < 0.01);
            assert.ok(Math.abs((textBox.y - pageBox.y) / pageBox.height - REF_AT.percentY) < 0.01);
            assert.ok(Math.abs(textBox.width / pageBox.width - REF_AT.percentWidth) < 0.01);
            // Its size is the stamp's 12 points, as a share of the page's 595 points.
            const fontPx = Number.parseFloat(
              await s.page.evaluate<string>(
                `getComputedStyle(document.querySelector('.page[data-page="1"] .stamped-text')).fontSize`,
              ),
            );
            assert.ok(Math.abs(fontPx / pageBox.width - 12 / 595.28) < 0.002, `font ${fontPx}px`);
            await s.capture('stamped-text');

            await fillIn(s);
            // The review: what is signed, and the consent statement with an unticked box.
            const review = s.page.getByRole('region', { name: 'Review and sign' });
            await review.getByText(`You are about to sign ${title}, 2 pages, 2 fields.`).waitFor();
            await review
              .getByRole('region', { name: 'Consent to sign electronically' })
              .getByText(DEFAULT_CONSENT_STATEMENTS.en!)
              .waitFor();
            assert.equal(await consentBox(s).isChecked(), false, 'the box starts unticked');
            await s.capture('review');

            // Sign is possible only once ticked: before, it says so and nothing is sent.
            await s.page.getByRole('button', { name: 'Sign the document' }).click();
            await s.page
              .getByRole('alert')
              .filter({ hasText: 'Tick the box to agree to sign electronically first.' })
              .waitFor();
            await s.expectFocus('I have read this statement and I agree to sign electronically.');
            assert.deepEqual(
              calls.filter((c) => /consent|sign\//.test(c)),
              [],
              'no consent, no sign call',
            );
            await consentBox(s).check();
            await s.capture('consent');
            await s.page.getByRole('button', { name: 'Sign the document' }).click();
            await s.page.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
            const order = calls.filter((c) => /consent|sign\//.test(c));
            assert.equal(order[0], '/api/v1/share/consent');
            assert.match(order[1] ?? '', /^\/api\/v1\/share\/document\/sign\/\d+$/);
            await s.capture('signed-with-download');

            // The signed PDF has the text where the page showed it (pdftotext -bbox).
            const path = await download(s);
            await assertSignaturesValid(path, 2);
            const bbox = await tool('pdftotext', ['-f', '1', '-l', '1', '-bbox', path, '-']);
            const page = /<page width="([\d.]+)" height="([\d.]+)"/.exec(bbox);
            const word =
              /<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="[\d.]+" yMax="[\d.]+">ACME-2026-17<\/word>/.exec(
                bbox,
              );
            const customer = /<word xMin="([\d.]+)" yMin="([\d.]+)"[^>]*>Customer<\/word>/.exec(bbox);
            assert.ok(page && word && customer, 'the text is in the signed PDF');
            const [width, height] = [Number(page[1]), Number(page[2])];
            assert.ok(Math.abs(Number(customer[1]) - (REF_AT.percentX * width + 2)) < 3, customer[0]);
            const top = REF_AT.percentY * height;
            assert.ok(Number(customer[2]) >= top && Number(customer[2]) < top + 12, customer[0]);
            assert.equal(Number(word[2]), Number(customer[2]), 'on one line, as on the page');
          });
          // The consent, through the API's audit log: the statement's SHA-256 and the address.
          const [consent, ...more] = await consentRecords(server, id);
          assert.equal(more.length, 0);
          assert.ok(consent);
          assert.equal(consent.actorId, `review-${size}@example.org`);
          assert.equal(
            consent.data.statementSha256,
            createHash('sha256').update(DEFAULT_CONSENT_STATEMENTS.en!, 'utf8').digest('hex'),
          );
          assert.match(String(consent.data.address), /127\.0\.0\.1|::1/);
          assert.equal((await readDocument(server, owner, id)).workflow.shareStateName, 'completed');
        });
      }

      /** Codes already used: each unlock asks for a new one. */
      const used = new Set<string>();
      async function newCode(kind: 'sms' | 'email', to: string): Promise<string> {
        for (let i = 0; i < 100; i++) {
          const found =
            kind === 'sms'
              ? /(\d{6})/.exec(
                  (await smsTextTo(server, to, (text) => !used.has(/(\d{6})/.exec(text)?.[1] ?? ''))) ?? '',
                )?.[1]
              : server.smtp.messages
                  .filter((m) => m.to.includes(to))
                  .map((m) => /<strong>(\d{6})<\/strong>/.exec(decode(m.raw))?.[1])
                  .find((code) => code !== undefined && !used.has(code));
          if (found) {
            used.add(found);
            return found;
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        return assert.fail(`no new code for ${to}`);
      }

      /** The unlock screen: the password, or a code asked for and typed in. */
      async function unlock(
        s: Session,
        secret: { password: string } | { code: 'sms' | 'email'; to: string },
      ) {
        await s.page.getByRole('heading', { name: 'Confirm that it is you' }).waitFor();
        if ('password' in secret) await s.page.getByLabel('Password').fill(secret.password);
        else {
          await s.page.getByRole('button', { name: 'Send me a code' }).click();
          await s.page.getByText(/A code was sent by/).waitFor();
          await s.page.getByLabel('Code', { exact: true }).fill(await newCode(secret.code, secret.to));
        }
        await s.page.getByRole('button', { name: 'Open the document' }).click();
      }

      const protections = [
        ['a password', 'desktop', { password: 'correct horse' }, { password: 'correct horse' }],
        ['an e-mail code', 'phone', { emailCode: true }, { code: 'email', to: 'emailed@example.org' }],
        ['an SMS code', 'desktop', { phone: '+15550002222' }, { code: 'sms', to: '+15550002222' }],
      ] as const;
      for (const [kind, size, recipient, secret] of protections) {
        it(`a share protected by ${kind}: the confirmation offers the download; reopening the link and unlocking again shows “You signed this document” with the download (${size}; reproduction 1)`, async () => {
          const email =
            'to' in secret && secret.code === 'email' ? secret.to : `${size}-${kind.length}@example.org`;
          const title = `Protected by ${kind}`;
          const { id, link: token } = await aReviewShare(title, email, recipient);
          await inSession(browser, `protected-${kind.replace(/\W+/g, '-')}`, size, async (s) => {
            await s.page.goto(link(token));
            await unlock(s, secret);
            await s.page.getByRole('heading', { name: title }).waitFor();
            await waitForPdf(s);
            await fillIn(s);
            await consentAndSign(s);
            await s.capture('signed-with-download');
            await assertSignaturesValid(await download(s), 2);
            assert.doesNotMatch(await s.page.locator('main').innerText(), /That did not work/);
          });
          assert.equal((await readDocument(server, owner, id)).workflow.shareStateName, 'completed');
          // Later, in another browser tab (no session kept): the link asks to unlock again, then downloads.
          await inSession(browser, `protected-again-${kind.replace(/\W+/g, '-')}`, size, async (s) => {
            await s.page.goto(link(token));
            await s.page
              .getByText(
                'You have already signed this document. Confirm that it is you to download what you signed.',
              )
              .waitFor();
            await s.capture('unlock-after-done');
            await unlock(s, secret);
            await s.page.getByRole('heading', { name: 'You signed this document' }).waitFor();
            assert.doesNotMatch(await s.page.locator('main').innerText(), /That did not work|is over/);
            await s.capture('unlocked-after-done');
            // The final copy: the signature and the seal on completion.
            await assertSignaturesValid(await download(s), 2);
          });
        });
      }

      it('after RECIPIENT_DOWNLOAD_DAYS the link is the human page that says it ended', async () => {
        const { id, link: token } = await aReviewShare('Kept a while', 'kept@example.org', {
          password: 'pw-kept-1',
        });
        await inSession(browser, 'download-window', 'phone', async (s) => {
          await s.page.goto(link(token));
          await unlock(s, { password: 'pw-kept-1' });
          await waitForPdf(s);
          await fillIn(s);
          await consentAndSign(s);
          assert.equal((await readDocument(server, owner, id)).workflow.shareStateName, 'completed');
          clock.advance((DOWNLOAD_DAYS + 1) * DAY);
          await s.page.goto(link(token));
          await s.page.getByRole('heading', { name: 'This link has ended' }).waitFor();
        });
      });
    },
  );
});
