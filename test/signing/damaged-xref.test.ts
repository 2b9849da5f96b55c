import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { before, describe, it } from 'node:test';
import { signPdf } from '../../src/pdf/sign-pdf.js';
import { damagedVariants, lastStartxref, withStartxref } from '../fixtures/damaged-pdfs.js';
import { ghostscriptPdf, libreOfficeForm, qpdfEncrypt } from '../fixtures/pdf-producers.js';
import { createTestPki } from '../fixtures/test-pki.js';
import { download } from '../helpers/documents.js';
import { ADA, aUser } from '../helpers/people.js';
import { useServer } from '../helpers/use-server.js';
import { assertOraclesAccept, hasTool, tool, useWorkspace } from '../pdf/oracles.js';
import { createDocument, signAndSealThroughApi } from './through-the-api.js';

const missing = ['gs', 'soffice', 'qpdf', 'pdfsig', 'pdfinfo', 'mutool'].filter((name) => !hasTool(name));
const skip = missing.length > 0 && `needs ${missing.join(', ')} (Debian packages .ci/run installs)`;

/** Pages each reader finds in `path`: qpdf, MuPDF and poppler, each reconstructing what it must. */
async function pagesSeenBy(path: string): Promise<{ qpdf: string; mupdf: string; poppler: string }> {
  return {
    qpdf: (await tool('qpdf', ['--show-npages', path])).split('\n').find((line) => /^\d+$/.test(line)) ?? '',
    mupdf: /Pages: (\d+)/.exec(await tool('mutool', ['info', path]))?.[1] ?? '',
    poppler: /Pages:\s+(\d+)/.exec(await tool('pdfinfo', [path]))?.[1] ?? '',
  };
}

describe(
  'issue 23 (4): PDFs with a damaged but repairable cross-reference table are repaired at upload, then signed',
  { skip },
  () => {
    const server = useServer();
    const space = useWorkspace();
    let token: string;
    const producers: { name: string; bytes: Buffer }[] = [];
    before(async () => {
      token = (await aUser(server, ADA)).token;
      producers.push({ name: 'Ghostscript', bytes: await ghostscriptPdf(space, ['Contract', 'Page one']) });
      producers.push({ name: 'LibreOffice', bytes: (await libreOfficeForm(space, { value: 'Ada' })).bytes });
    });

    /** POST /files/saveFile, the whole answer. */
    const uploadFile = (bytes: Buffer, name: string) =>
      server.api('POST', '/files/saveFile', {
        token,
        form: { file: { name: `${name}.pdf`, type: 'application/pdf', bytes } },
      });

    it('the reproduction: qpdf, MuPDF and poppler open every variant', async () => {
      for (const producer of producers) {
        for (const variant of damagedVariants(producer.bytes)) {
          const path = await space.write('variant.pdf', variant.bytes);
          assert.deepEqual(
            await pagesSeenBy(path),
            { qpdf: '1', mupdf: '1', poppler: '1' },
            `${producer.name}, ${variant.name}`,
          );
        }
      }
    });

    for (const producerName of ['Ghostscript', 'LibreOffice']) {
      it(`${producerName}: each variant is repaired at upload (the file record says so; the stored file is the upload plus a rebuilt cross-reference section), then created, signed and sealed; pdfsig, mutool and qpdf accept it`, async () => {
        const producer = producers.find((p) => p.name === producerName)!;
        for (const [i, variant] of damagedVariants(producer.bytes).entries()) {
          const uploaded = await uploadFile(variant.bytes, `damaged-${i}`);
          assert.equal(uploaded.status, 200, uploaded.text);
          const file = uploaded.body.file;
          assert.deepEqual(
            file.repaired,
            {
              problem: file.repaired?.problem,
              originalSize: variant.bytes.length,
              originalChecksum: createHash('sha512').update(variant.bytes).digest('hex'),
            },
            variant.name,
          );
          assert.match(file.repaired.problem, /cross-reference/, variant.name);
          assert.equal(file.pages, 1);
          const stored = await download(server, token, file.id);
          assert.equal(file.size, stored.length);
          assert.equal(file.checksum, createHash('sha512').update(stored).digest('hex'));
          assert.ok(
            stored.subarray(0, variant.bytes.length).equals(variant.bytes),
            'the upload, then the repair',
          );
          const storedPath = await space.write(`repaired-${i}.pdf`, stored);
          const check = await tool('qpdf', ['--check', storedPath]);
          assert.match(check, /No syntax or stream encoding errors found/, `${variant.name}: ${check}`);
          assert.doesNotMatch(check, /WARNING/, `${variant.name}: ${check}`);

          const result = await signAndSealThroughApi(server, token, space, file.id, `${producerName}-${i}`);
          await assertOraclesAccept(result.signed.path, 2);
        }
      });
    }

    it('objects packed in object streams (qpdf --object-streams=generate) and an encrypted file (empty user password): repaired and signed too', async () => {
      const ghostscript = producers[0]!.bytes;
      const packed = await qpdfRewrite(ghostscript, ['--object-streams=generate']);
      const encrypted = await qpdfEncrypt(space, ghostscript, { ownerPassword: 'owner', bits: 256 });
      for (const [name, sound] of [
        ['object streams', packed],
        ['AES-256', encrypted],
      ] as const) {
        const damaged = withStartxref(sound, lastStartxref(sound) + 7);
        const uploaded = await uploadFile(damaged, name);
        assert.equal(uploaded.status, 200, uploaded.text);
        assert.match(uploaded.body.file.repaired?.problem ?? '', /startxref/, name);
        const result = await signAndSealThroughApi(server, token, space, uploaded.body.file.id, name);
        await assertOraclesAccept(result.signed.path, 2);
      }
    });

    /** `pdf` rewritten by qpdf with `args`. */
    async function qpdfRewrite(pdf: Buffer, args: string[]): Promise<Buffer> {
      const input = await space.write('qpdf-in.pdf', pdf);
      const output = `${space.dir}/qpdf-out.pdf`;
      await tool('qpdf', [...args, input, output]);
      return readFile(output);
    }

    it('a sound file is stored as uploaded, without a repair', async () => {
      const uploaded = await uploadFile(producers[0]!.bytes, 'sound');
      assert.equal(uploaded.status, 200, uploaded.text);
      assert.equal(uploaded.body.file.repaired, undefined);
      assert.equal(uploaded.body.file.size, producers[0]!.bytes.length);
    });

    it('a damaged file that carries a signature is not repaired (that would be a change after it): POST /documents says what is wrong', async () => {
      const pki = await createTestPki();
      const signed = Buffer.from(
        (await signPdf({ pdf: producers[0]!.bytes, signer: await pki.signer({ name: 'Grace Hopper' }) })).pdf,
      );
      const damaged = withStartxref(signed, lastStartxref(signed) + 7);
      const uploaded = await uploadFile(damaged, 'signed-damaged');
      assert.equal(uploaded.status, 200, uploaded.text);
      assert.equal(uploaded.body.file.repaired, undefined);
      assert.equal(uploaded.body.file.size, damaged.length);
      const created = await createDocument(server, token, uploaded.body.file.id, 'Signed and damaged');
      assert.equal(created.status, 400, created.text);
      assert.equal(created.body.code, 'VALIDATION_ERROR');
      assert.equal(
        created.body.message,
        'body.pdfFile.content: the PDF is damaged: its startxref does not point to a cross-reference section; repair it before signing',
      );
    });

    it('a damaged file whose objects are gone cannot be repaired: stored as uploaded, refused by POST /documents naming the damage', async () => {
      const bytes = producers[0]!.bytes;
      const gutted = Buffer.concat([
        bytes.subarray(0, 20),
        Buffer.alloc(bytes.length - 200, 0x20),
        bytes.subarray(bytes.length - 180),
      ]);
      const uploaded = await uploadFile(gutted, 'gutted');
      assert.equal(uploaded.status, 200, uploaded.text);
      assert.equal(uploaded.body.file.repaired, undefined);
      const created = await createDocument(server, token, uploaded.body.file.id, 'Gutted');
      assert.equal(created.status, 400, created.text);
      assert.match(created.body.message, /^body\.pdfFile\.content: the PDF (is damaged|cannot be read)/);
    });
  },
);
