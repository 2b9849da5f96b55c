import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { PdfRef, type PdfStream } from '@libpdf/core';
import { PdfTooLarge } from '../../src/pdf/errors.js';
import { memorySource } from '../../src/pdf/reader/byte-source.js';
import { LazyPdf } from '../../src/pdf/reader/lazy-pdf.js';
import { StreamBudget } from '../../src/pdf/reader/stream-data.js';
import { assertWithinPdfLimits, PDF_LIMITS } from '../../src/pdf/pdf-limits.js';
import {
  digitRunPdf,
  manyObjectsPdf,
  manyPagesHostilePdf,
  textPdf,
  zipBombPdf,
} from '../fixtures/hostile-pdfs.js';
import { upload } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

describe('PDF parsing limits (docs/security.md: Limits): a hostile PDF is refused with 413, never an OOM or minutes of CPU', () => {
  const server = useServer();
  let token: string;
  before(async () => (token = await server.adminToken()));

  const searchAnchors = (bytes: Buffer) =>
    server.api('POST', '/files/saveFile', {
      token,
      form: {
        fields: { signatureAnchors: JSON.stringify([{ id: 'a', text: 'page' }]) },
        file: { name: 'hostile.pdf', type: 'application/pdf', bytes },
      },
    });
  const verify = (bytes: Buffer) =>
    server.api('POST', '/verify', {
      token,
      form: { file: { name: 'hostile.pdf', type: 'application/pdf', bytes } },
    });
  const createDocument = (pdf: string) =>
    server.api('POST', '/documents', {
      token,
      body: { body: { documentTitle: 'Hostile', pdfFile: { content: pdf } } },
    });

  function assertRefused(
    response: { status: number; body: Record<string, unknown>; text: string },
    message: RegExp,
  ) {
    assert.equal(response.status, 413, response.text);
    assert.deepEqual(Object.keys(response.body).sort(), ['code', 'error', 'message', 'statusCode']);
    assert.equal(response.body.code, 'LIMIT_EXCEEDED');
    assert.match(String(response.body.message), message);
  }

  it(`a stream that inflates past ${PDF_LIMITS.streamBytes / MIB} MiB (1 MB → 1 GiB; 7 KB deflated twice → 4 GiB) is refused wherever the PDF is read whole: anchors, a document’s main file; verification, which reads only the objects a signature check needs, never inflates it`, async () => {
    const oneGib = zipBombPdf({ inflatedBytes: GIB });
    const fourGibTwice = zipBombPdf({ inflatedBytes: 4 * GIB, layers: 2 });
    assert.ok(oneGib.length < 1.1 * MIB && fourGibTwice.length < 16 * 1024);
    for (const bomb of [oneGib, fourGibTwice]) {
      assertRefused(await searchAnchors(bomb), /A stream of the PDF decompresses to more than 64 MiB/);
      const verified = await verify(bomb);
      assert.equal(verified.status, 200, verified.text);
      assert.equal(verified.body.verdict.headline, 'unsigned');
      // Stored as bytes (an upload is any file); every use that reads it as a PDF is refused.
      const id = await upload(server, token, bomb);
      assertRefused(await createDocument(id), /decompresses to more than 64 MiB/);
    }
  });

  it(`a reading that decodes streams as it goes (the lazy reader, the revisions of a verification) stops past ${PDF_LIMITS.totalStreamBytes / MIB} MiB of them together, and past ${PDF_LIMITS.streamBytes / MIB} MiB in one`, () => {
    const six = zipBombPdf({ inflatedBytes: 48 * MIB, streams: 6 });
    const reader = LazyPdf.open(memorySource(six));
    const streams = [5, 6, 7, 8, 9, 10].map((n) => reader.getObject(PdfRef.of(n, 0)) as PdfStream);
    for (const stream of streams.slice(0, 5)) assert.equal(reader.decode(stream).length, 48 * MIB);
    assert.throws(
      () => reader.decode(streams[5]!),
      (error: unknown) =>
        error instanceof PdfTooLarge && /streams decompress to more than 256 MiB/.test(error.message),
    );
    // The readers of one file's earlier revisions share one budget (difference analysis).
    const budget = new StreamBudget();
    const first = LazyPdf.open(memorySource(six), budget);
    const second = LazyPdf.open(memorySource(six), budget);
    for (const n of [5, 6, 7]) first.decode(first.getObject(PdfRef.of(n, 0)) as PdfStream);
    second.decode(second.getObject(PdfRef.of(8, 0)) as PdfStream);
    second.decode(second.getObject(PdfRef.of(9, 0)) as PdfStream);
    assert.throws(() => second.decode(second.getObject(PdfRef.of(10, 0)) as PdfStream), PdfTooLarge);
    const one = LazyPdf.open(memorySource(zipBombPdf({ inflatedBytes: GIB })));
    assert.throws(
      () => one.decode(one.getObject(PdfRef.of(5, 0)) as PdfStream),
      (error: unknown) =>
        error instanceof PdfTooLarge &&
        /A stream of the PDF decompresses to more than 64 MiB/.test(error.message),
    );
  });

  it(`all streams together past ${PDF_LIMITS.totalStreamBytes / MIB} MiB are refused, each within its own limit`, async () => {
    const bomb = zipBombPdf({ inflatedBytes: 48 * MIB, streams: 6 });
    assertRefused(await searchAnchors(bomb), /streams decompress to more than 256 MiB/);
  });

  it(`more than ${PDF_LIMITS.pages} pages, or more than ${PDF_LIMITS.objects} objects, are refused before the engine loads them, and by the lazy reader (verification) when its cross-reference lists them`, async () => {
    assertRefused(await searchAnchors(manyPagesHostilePdf(PDF_LIMITS.pages + 1)), /more than 2000 pages/);
    assertRefused(await searchAnchors(manyObjectsPdf(PDF_LIMITS.objects + 1)), /more than 100000 objects/);
    assertRefused(await verify(manyPagesHostilePdf(PDF_LIMITS.pages + 1)), /more than 2000 pages/);
    assertRefused(await verify(manyObjectsPdf(PDF_LIMITS.objects + 1)), /more than 100000 objects/);
  });

  it(`merging files that together pass ${PDF_LIMITS.pages} pages is refused, the document unchanged`, async () => {
    const main = await upload(server, token, manyPagesHostilePdf(1_500));
    const doc = (await createDocument(main)).body.results[0];
    const appendix = await upload(server, token, manyPagesHostilePdf(501));
    const merged = await server.api('PUT', `/documents/${doc.documentId}/merge`, {
      token,
      body: { version: 1, files: [appendix] },
    });
    assertRefused(merged, /more than 2000 pages/);
    const after = await server.api('GET', `/documents/${doc.documentId}`, { token });
    assert.equal(after.body.results[0]._version, 1);
    assert.equal(after.body.results[0].pdfFile.content, main);
  });

  it('a PDF within the limits is still read (a 32 MiB page stream, 2000 pages)', async () => {
    const inflated = await searchAnchors(zipBombPdf({ inflatedBytes: 32 * MIB }));
    assert.equal(inflated.status, 200, inflated.text);
    assert.equal(inflated.body.file.pages, 1);
    const pages = await searchAnchors(manyPagesHostilePdf(PDF_LIMITS.pages));
    assert.equal(pages.status, 200, pages.text);
    assert.equal(pages.body.anchorPositions[0].fields.length, PDF_LIMITS.pages);
  });

  it('a long run of digits (a signature’s zero-padded /Contents, 1 MiB of them) is counted in one pass: the upload is read, its page counted, and it verifies', async () => {
    // Counting object headers from every digit of such a run was quadratic: this one would take hours.
    const pdf = digitRunPdf(1024 * 1024);
    const uploaded = await server.api('POST', '/files/saveFile', {
      token,
      form: { file: { name: 'padded.pdf', type: 'application/pdf', bytes: pdf } },
    });
    assert.equal(uploaded.status, 200, uploaded.text);
    assert.equal(uploaded.body.file.pages, 1);
    const verified = await verify(pdf);
    assert.equal(verified.status, 200, verified.text);
    assert.deepEqual(verified.body.signatures, []);
  });

  it(`a file over ${PDF_LIMITS.fileBytes / MIB} MiB is refused before the full parse reads it whole (LIMIT_EXCEEDED; past 512 MiB its text was longer than V8's longest string, a 500)`, async () => {
    await assert.rejects(
      assertWithinPdfLimits(new Uint8Array(PDF_LIMITS.fileBytes + 1)),
      (error: unknown) => error instanceof PdfTooLarge && /larger than 256 MiB/.test(error.message),
    );
  });

  it('truncated PDFs, bombs included, are 400 VALIDATION_ERROR naming the problem', async () => {
    const bomb = zipBombPdf({ inflatedBytes: GIB });
    for (const cut of [bomb.subarray(0, bomb.length / 2), textPdf(['hello']).subarray(0, 300)]) {
      const response = await searchAnchors(Buffer.from(cut));
      assert.equal(response.status, 400, response.text);
      assert.equal(response.body.code, 'VALIDATION_ERROR');
      assert.match(response.body.message, /truncated/);
    }
  });
});
