import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { Browser, Download, FileChooser } from 'playwright-core';
import { aSignedDocument, mainFileOf } from '../helpers/documents.js';
import { useServer } from '../helpers/use-server.js';
import { useWorkspace } from '../pdf/oracles.js';
import { ensureBuiltPage, hasChromium, inSession, launchChromium, type Session } from './browser.js';

const SIGNATURE = {
  type: 'signature',
  pages: [1],
  position: { percentX: 0.1, percentY: 0.8, percentWidth: 0.2, percentHeight: 0.05 },
};

/**
 * Issue 27 item 2: "The public page tested in Chromium: drop a signed PDF, see the verdict; a tampered
 * one shows what broke." The page (PUBLIC_URL/verify) with no account: a real drop of a PDF signed
 * through the API, the file picker from the keyboard, the reports to download, the errors beside
 * the drop zone, and axe-core on every state (Session.capture), at phone and desktop sizes.
 */
describe(
  'issue 27: the public verification page (PUBLIC_URL/verify) in headless Chromium',
  {
    skip: hasChromium
      ? false
      : 'Debian’s chromium is not installed at /usr/bin/chromium (apt-get install chromium): browser tests skipped',
  },
  () => {
    const server = useServer({ env: { PUBLIC_VERIFY_MAX_MB: '1' } });
    const space = useWorkspace();
    let browser: Browser;
    let documentId: string;
    let signed: Buffer;
    let tampered: Buffer;
    before(async () => {
      ensureBuiltPage();
      browser = await launchChromium();
      const token = await server.adminToken();
      documentId = await aSignedDocument(server, token, { title: 'Lease', signatures: [SIGNATURE] });
      signed = await mainFileOf(server, token, documentId);
      // One byte of the page's text, inside the signed range: `(Page 1)` becomes `(Qage 1)`.
      tampered = Buffer.from(signed);
      const offset = tampered.indexOf('(Page 1)') + 1;
      assert.ok(offset > 0);
      tampered[offset] = tampered[offset]! ^ 0x01;
    });
    after(async () => {
      await browser?.close();
    });

    const open = (s: Session, query = '') => s.page.goto(`${server.url}/verify${query}`);

    /** Drops the bytes on the drop zone as a file, the way a browser's drag and drop hands them over. */
    async function drop(s: Session, bytes: Buffer, name: string): Promise<void> {
      // Written as a string: the test's TypeScript has no DOM types (the page's does).
      const transfer = await s.page.evaluateHandle(
        `(() => {
          const data = Uint8Array.from(atob(${JSON.stringify(bytes.toString('base64'))}), (c) => c.charCodeAt(0));
          const transfer = new DataTransfer();
          transfer.items.add(new File([data], ${JSON.stringify(name)}, { type: 'application/pdf' }));
          return transfer;
        })()`,
      );
      const zone = s.page.getByTestId('dropzone');
      await zone.dispatchEvent('dragover', { dataTransfer: transfer });
      await zone.dispatchEvent('drop', { dataTransfer: transfer });
    }

    /** Picks a file with the keyboard: Tab to the button, Enter opens the picker. */
    async function pick(s: Session, path: string): Promise<void> {
      // Listening turns Chromium's file-chooser interception on (a message to the browser): listening
      // before the Tabs, it is on by the time the key is pressed, however busy the machine.
      const chooser = new Promise<FileChooser>((resolve) => s.page.once('filechooser', resolve));
      await s.tabTo(/^Choose a PDF/);
      await s.page.keyboard.press('Enter');
      await (await chooser).setFiles(path);
    }

    const verdict = async (s: Session) => {
      const box = s.page.locator('[data-verdict]');
      await box.waitFor();
      return { kind: await box.getAttribute('data-verdict'), text: await box.innerText() };
    };

    async function download(s: Session, name: RegExp): Promise<Download> {
      const [file] = await Promise.all([
        s.page.waitForEvent('download'),
        s.page.getByRole('link', { name }).click(),
      ]);
      return file;
    }

    it('a dropped signed PDF: valid, who signed, when, the level in words; both reports download', async () => {
      await inSession(browser, 'verify-valid', 'desktop', async (s) => {
        await open(s);
        await s.page.getByRole('heading', { name: 'Check a signed PDF' }).waitFor();
        await s.capture('empty');
        await drop(s, signed, 'lease-signed.pdf');
        const { kind, text } = await verdict(s);
        assert.equal(kind, 'valid');
        assert.match(text, /Valid: the signatures are intact/);
        assert.match(text, /lease-signed\.pdf/);
        await s.expectFocus('Valid: the signatures are intact');
        const card = s.page.locator('.signature-card');
        assert.equal(await card.count(), 1);
        const facts = await card.innerText();
        assert.match(facts, /Signature 1: Administrator/);
        assert.match(facts, /Signed by\s+Administrator/);
        assert.match(facts, /Signery seal, issued by Signery development root CA/);
        assert.match(facts, /Signed at\s+\w+ \d{1,2}, \d{4} at .+ \(as the signer’s computer said\)/);
        assert.match(facts, /B-B \(basic\): proves who signed/);
        assert.match(facts, /Changes afterwards\s+None: nothing was added after this signature\./);
        assert.equal(await s.page.locator('.findings').count(), 0, 'nothing broke');
        await s.capture('valid');

        const json = await download(s, /Download the report \(JSON\)/);
        assert.equal(json.suggestedFilename(), 'lease-signed-verification.json');
        const report = JSON.parse(await readFile(await json.path(), 'utf8'));
        assert.equal(report.signatures[0].indication, 'TOTAL_PASSED');
        const etsi = await download(s, /ETSI validation report/);
        assert.equal(etsi.suggestedFilename(), 'lease-signed-etsi-validation-report.xml');
        assert.match(await readFile(await etsi.path(), 'utf8'), /ValidationReport/);
      });
    });

    it('a tampered PDF, picked with the keyboard on a phone: not valid, and what broke in plain words', async () => {
      const path = await space.write('tampered.pdf', tampered);
      await inSession(browser, 'verify-tampered', 'phone', async (s) => {
        await open(s);
        await pick(s, path);
        const { kind, text } = await verdict(s);
        assert.equal(kind, 'invalid');
        assert.match(text, /Not valid: a signature is broken/);
        const card = s.page.locator('.signature-card');
        assert.equal(await card.getAttribute('data-state'), 'broken');
        const findings = await card.locator('.findings').innerText();
        assert.match(findings, /What is wrong/);
        assert.match(findings, /changed after signing: its fingerprint no longer matches/);
        assert.doesNotMatch(findings, /HASH_FAILURE|digest/i, 'plain words, not codes');
        await s.capture('tampered');
      });
    });

    it('opened from a document’s QR code: it names the document and asks for the PDF; errors show beside the drop zone', async () => {
      await inSession(browser, 'verify-errors', 'desktop', async (s) => {
        await open(s, `?document=${documentId}`);
        const named = s.page.getByTestId('named-document');
        assert.match(await named.innerText(), new RegExp(`code on document ${documentId}`));
        await s.capture('from-qr-code');

        await drop(s, Buffer.from('Just some text.'), 'notes.txt');
        const error = s.page.locator('#drop-error');
        await error.waitFor();
        assert.equal(await error.innerText(), 'This file is not a PDF. Choose a PDF file.');
        assert.equal(await s.page.locator('[data-verdict]').count(), 0);
        await s.capture('not-a-pdf');

        await drop(s, Buffer.alloc(1024 * 1024 + 1, 0x25), 'huge.pdf');
        await s.page
          .getByText('This file is too large to be checked here. Files of up to 1 MB can be checked.')
          .waitFor();
        await s.capture('too-large');

        // A good file after an error: the error goes, the verdict comes.
        await drop(s, signed, 'again.pdf');
        assert.equal((await verdict(s)).kind, 'valid');
        assert.equal(await s.page.locator('#drop-error').count(), 0);
      });
    });

    it('the audit trail the report carries (issue 27: added by the report, not yet by this installation) is shown readably', async () => {
      await inSession(browser, 'verify-audit-trail', 'desktop', async (s) => {
        // The server's real answer, with the `auditTrail` field the report is getting added.
        await s.page.route('**/verify?dss=true', async (route) => {
          const answer = await route.fetch();
          const report = await answer.json();
          report.auditTrail = {
            present: true,
            intact: true,
            coveredBy: 'Signature1',
            problems: [],
            document: { id: documentId, title: 'Lease' },
            events: [
              {
                occurredAt: '2026-03-04T10:00:00Z',
                activityType: 'documentCreated',
                actor: 'Olga Owner',
                hash: 'aa',
              },
              {
                occurredAt: '2026-03-04T10:05:00Z',
                activityType: 'documentSigned',
                actor: 'Olga Owner',
                hash: 'bb',
              },
            ],
            revisions: [
              { revision: 1, reason: 'uploaded', sha256: 'cc', inFile: true },
              { revision: 2, reason: 'signed', sha256: 'dd', inFile: false },
            ],
          };
          await route.fulfill({ response: answer, json: report });
        });
        await open(s, `?document=${documentId}`);
        await drop(s, signed, 'lease.pdf');
        assert.match(
          (await verdict(s)).text,
          new RegExp(`This PDF is document ${documentId}, the one the code names`),
        );
        const trail = await s.page.getByTestId('audit-trail').innerText();
        assert.match(trail, /The audit trail embedded in the file is intact/);
        assert.match(trail, /It is covered by Signature1/);
        assert.match(trail, /Document: Lease/);
        assert.match(trail, /March 4, 2026 at .*: document created, by Olga Owner/);
        assert.match(trail, /document signed, by Olga Owner/);
        assert.match(trail, /Version 1: uploaded — contained in this file/);
        assert.match(trail, /Version 2: signed — not contained in this file/);
        await s.capture('audit-trail');
      });
    });

    it('speaks the signer page’s languages: switched to German, the verdict follows', async () => {
      await inSession(browser, 'verify-language', 'desktop', async (s) => {
        await open(s);
        await s.page.locator('#language').selectOption('de');
        await s.page.getByRole('heading', { name: 'Ein signiertes PDF prüfen' }).waitFor();
        await drop(s, tampered, 'x.pdf');
        assert.match((await verdict(s)).text, /Ungültig/);
        await s.capture('german');
      });
    });
  },
);
