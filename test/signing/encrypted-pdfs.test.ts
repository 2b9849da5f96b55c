import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import {
  ghostscriptPdf,
  libreOfficeForm,
  qpdfEncrypt,
  type QpdfEncryption,
} from '../fixtures/pdf-producers.js';
import { ADA, aUser } from '../helpers/people.js';
import { upload } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { assertOraclesAccept, darkPixels, hasTool, renderGrey, tool, useWorkspace } from '../pdf/oracles.js';
import { createDocument, SIGNATURE_BOX, signAndSealThroughApi } from './through-the-api.js';

const missing = ['gs', 'soffice', 'qpdf', 'pdfsig', 'mutool', 'pdftoppm'].filter((name) => !hasTool(name));
const skip = missing.length > 0 && `needs ${missing.join(', ')} (Debian packages .ci/run installs)`;

/** What qpdf says of a file's encryption (its algorithm and permissions), to compare before and after. */
async function encryptionOf(path: string): Promise<string> {
  return tool('qpdf', ['--show-encryption', path]);
}

/** Fully qualified names of the AcroForm's fields, as qpdf decrypts them with the document's key. */
async function fieldNames(path: string): Promise<string[]> {
  const json = JSON.parse(await tool('qpdf', ['--json', '--json-key=acroform', path])) as {
    acroform: { fields: { fullname: string }[] };
  };
  return json.acroform.fields.map((field) => field.fullname);
}

describe('PDFs encrypted with an empty user password are signed in place', { skip }, () => {
  const server = useServer();
  const space = useWorkspace();
  let token: string;
  let plain: Buffer;
  before(async () => {
    token = (await aUser(server, ADA)).token;
    plain = await ghostscriptPdf(space, ['Statement of account', 'Balance: 1,234.56']);
  });

  const openable: [string, QpdfEncryption][] = [
    ['AES-256 (R6), copying forbidden', { ownerPassword: 'owner', bits: 256, restrictions: ['--extract=n'] }],
    ['AES-128 (R4)', { ownerPassword: 'owner', bits: 128, aes: true }],
    [
      'RC4 128-bit (R3), printing forbidden',
      { ownerPassword: 'owner', bits: 128, restrictions: ['--print=none'] },
    ],
    ['RC4 40-bit (R2)', { ownerPassword: 'owner', bits: 40 }],
    [
      // Acrobat's "commenting, filling in form fields, and signing": other changes forbidden (bit 4).
      'AES-256, only commenting, form filling and signing allowed (--modify=annotate)',
      { ownerPassword: 'owner', bits: 256, restrictions: ['--modify=annotate'] },
    ],
  ];
  for (const [i, [name, encryption]] of openable.entries()) {
    it(`${name}: signed and sealed through the API, encrypted with the document's key, earlier bytes untouched; pdfsig, mutool, qpdf and poppler agree`, async () => {
      const encrypted = await qpdfEncrypt(space, plain, encryption);
      const result = await signAndSealThroughApi(server, token, space, encrypted, `statement-${i}`);
      assert.ok(
        result.signed.bytes.subarray(0, encrypted.length).equals(encrypted),
        'the upload is the first revision, byte for byte',
      );
      await assertOraclesAccept(result.signed.path, 2);
      const before = await encryptionOf(result.uploaded.path);
      assert.match(before, /User password = \n|P = /);
      assert.equal(await encryptionOf(result.signed.path), before, 'same encryption, same permissions');
      // The new strings (field names) and streams (the visible signature) decrypt with the document's key.
      assert.deepEqual(await fieldNames(result.signed.path), ['Signature1', 'Signature2']);
      for (const viewer of ['poppler', 'mupdf'] as const) {
        const dark = darkPixels(await renderGrey(result.signed.path, viewer), SIGNATURE_BOX);
        assert.ok(dark > 50, `${viewer} draws the signature (${dark} dark pixels)`);
      }
      const report = await server.api('GET', `/documents/${result.documentId}/verify`, { token });
      assert.equal(report.status, 200, report.text);
      assert.deepEqual(
        report.body.signatures.map((s: { indication: string }) => s.indication),
        ['TOTAL_PASSED', 'TOTAL_PASSED'],
        report.text,
      );
      assert.deepEqual(
        report.body.signatures.map((s: { signerName: string }) => s.signerName),
        ['Ada Lovelace', 'Organisation seal'],
        'the signature dictionaries’ strings decrypt',
      );
    });
  }

  it('a LibreOffice form encrypted with AES-256: the form appearances drawn at the first signature are encrypted too', async () => {
    const form = await libreOfficeForm(space, { value: 'Ada Lovelace' });
    const encrypted = await qpdfEncrypt(space, form.bytes, { ownerPassword: 'owner', bits: 256 });
    const result = await signAndSealThroughApi(server, token, space, encrypted, 'encrypted-form');
    await assertOraclesAccept(result.signed.path, 2);
    assert.match(await tool('mutool', ['draw', '-F', 'txt', result.signed.path, '1']), /Ada Lovelace/);
    const dark = darkPixels(await renderGrey(result.signed.path, 'poppler'), SIGNATURE_BOX);
    assert.ok(dark > 50, `poppler draws the signature (${dark} dark pixels)`);
  });

  it('a file that needs a user password to open keeps the clear 400', async () => {
    const locked = await qpdfEncrypt(space, plain, {
      userPassword: 'user',
      ownerPassword: 'owner',
      bits: 256,
    });
    const created = await createDocument(server, token, await upload(server, token, locked), 'Locked');
    assert.equal(created.status, 400, created.text);
    assert.equal(created.body.code, 'VALIDATION_ERROR');
    assert.match(created.body.message, /^body\.pdfFile\.content: the PDF is encrypted with a password/);
  });

  for (const [name, restrictions] of [
    ['annotations forbidden (--annotate=n)', ['--annotate=n']],
    ['every change forbidden (--modify=none)', ['--modify=none']],
    ['only form filling allowed (--modify=form)', ['--modify=form']],
  ] as const) {
    it(`permissions that forbid signing, ${name}: refused as a main file with a message naming the restriction`, async () => {
      const restricted = await qpdfEncrypt(space, plain, {
        ownerPassword: 'owner',
        bits: 256,
        restrictions: [...restrictions],
      });
      const created = await createDocument(
        server,
        token,
        await upload(server, token, restricted),
        'Restricted',
      );
      assert.equal(created.status, 400, created.text);
      assert.equal(created.body.code, 'VALIDATION_ERROR');
      assert.equal(
        created.body.message,
        'body.pdfFile.content: the PDF’s permissions forbid adding annotations and form fields, and signing adds both; ask its author for a copy without that restriction',
      );
    });
  }
});
