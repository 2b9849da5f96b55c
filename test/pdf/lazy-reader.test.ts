import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { before, describe, it } from 'node:test';
import { PDF, PdfDict, PdfRef } from '@libpdf/core';
import { pageGeometries } from '../../src/pdf/geometry.js';
import { hasEngine, readPdf } from '../../src/pdf/appendable-pdf.js';
import { openPdf } from '../../src/pdf/open-pdf.js';
import { memorySource, withKnownPrefix, type ByteSource } from '../../src/pdf/reader/byte-source.js';
import { LazyPdf } from '../../src/pdf/reader/lazy-pdf.js';
import { signPdf, signPdfUpdate } from '../../src/pdf/sign-pdf.js';
import { verifyPdf } from '../../src/pdf/verify-pdf.js';
import { adoptText } from '../../src/pdf/reader/source-text.js';
import { serializeObject } from '../../src/pdf/writer/serialize-object.js';
import { openDevCa, type DevCa } from '../../src/pki/dev-ca.js';
import { damagedVariants } from '../fixtures/damaged-pdfs.js';
import { rawPdf } from '../fixtures/hostile-pdfs.js';
import { manyPagesPdf, onePagePdf } from '../fixtures/pdf-fixtures.js';
import { qpdfEncrypt, qpdfRewrite } from '../fixtures/pdf-producers.js';
import { hasTool, useWorkspace } from './oracles.js';

/**
 * Issue 26: signing reads a PDF lazily (src/pdf/reader/): the trailer and cross-reference data from
 * the end, then only the objects it needs. What it reads must be what the full parse (@libpdf/core)
 * reads, whatever wrote the file; what it refuses, the full parse refuses in the same words.
 */
describe('the lazy reader: the objects the full parse reads, read on demand', () => {
  const space = useWorkspace();
  const files = new Map<string, Uint8Array>();

  before(async () => {
    const plain = onePagePdf().bytes;
    files.set('classic table', plain);
    files.set('hybrid (a table naming an /XRefStm)', hybridPdf());
    files.set('object streams (generated)', manyPagesPdf(12, { objectStreams: true }).bytes);
    if (!hasTool('qpdf')) return;
    files.set(
      'qpdf object streams (PNG predictor)',
      await qpdfRewrite(space, plain, ['--object-streams=generate']),
    );
    files.set('qpdf linearized', await qpdfRewrite(space, manyPagesPdf(3).bytes, ['--linearize']));
    for (const [name, encryption] of [
      ['RC4 40-bit (R2)', { bits: 40 }],
      ['RC4 128-bit (R3)', { bits: 128 }],
      ['AES-128 (R4)', { bits: 128, aes: true }],
      ['AES-256 (R6), object streams', { bits: 256 }],
    ] as const) {
      const source = name.includes('object streams')
        ? await qpdfRewrite(space, plain, ['--object-streams=generate'])
        : plain;
      files.set(name, await qpdfEncrypt(space, source, { ownerPassword: 'owner', ...encryption }));
    }
  });

  it('every object of files from several writers reads as @libpdf/core reads it (strings decrypted)', async () => {
    assert.ok(files.size >= 3);
    for (const [name, bytes] of files) {
      const lazy = LazyPdf.open(memorySource(bytes));
      const full = await PDF.load(bytes);
      let compared = 0;
      for (let number = 1; number < lazy.trailer.size; number++) {
        const ref = PdfRef.of(number, 0);
        const expected = full.getObject(ref);
        const read = lazy.getObject(ref);
        if (!expected || expected.type === 'null') continue;
        assert.ok(read, `${name}: object ${number} is missing`);
        // The cross-reference stream's dictionary is the trailer; the engine keeps it as it found it.
        if (expected instanceof PdfDict && expected.getName('Type')?.value === 'XRef') continue;
        // The engine decrypts the strings of the encryption dictionary, which are never encrypted (7.6.1).
        if (ref === lazy.encryption?.entry) continue;
        // The lazy reader keeps each value's source text (exact rewriting, issue 38), which the
        // engine does not: the same values (adoptText compares them), or else the same when written.
        if (!adoptText(expected, read))
          assert.equal(
            Buffer.from(serializeObject(read)).toString('latin1'),
            Buffer.from(serializeObject(expected)).toString('latin1'),
            `${name}: object ${number}`,
          );
        compared++;
      }
      assert.ok(compared >= 5, `${name}: only ${compared} objects compared`);
      assert.equal(lazy.pageCount, full.getPageCount(), name);
      assert.equal(lazy.mayAnnotate, full.getPermissions().annotate, name);
      assert.equal(Boolean(lazy.encryption), full.isEncrypted, name);
    }
  });

  it('finds each page down a nested page tree by /Count, as the full parse lists them, with inherited boxes and rotation', async () => {
    const bytes = nestedPageTreePdf();
    const lazy = LazyPdf.open(memorySource(bytes));
    const full = await openPdf({ bytes });
    assert.equal(lazy.pageCount, 6);
    const fromLazy = pageGeometries(lazy);
    const fromFull = pageGeometries(full);
    for (let i = 0; i < 6; i++) {
      const { dict: _lazyDict, ...shown } = fromLazy.at(i);
      const { dict: _fullDict, ...expected } = fromFull.at(i);
      assert.deepEqual(shown, expected, `page ${i + 1}`);
    }
    assert.equal(fromLazy.at(4).rotation, 90);
    assert.deepEqual(fromLazy.at(5).box, [0, 0, 300, 400]);
    assert.throws(() => lazy.page(6), RangeError);
  });

  it('refuses what the full parse refuses, as it words it (or naming the damage where the engine cannot): garbage, a cut-off file, damaged cross-reference data, a password to open', async () => {
    const plain = Buffer.from(onePagePdf().bytes);
    const refused: [string, Uint8Array][] = [
      ['garbage', Buffer.from('hello, this is not a PDF at all')],
      ['cut off', plain.subarray(0, plain.length - 40)],
      ...damagedVariants(plain).map((variant): [string, Uint8Array] => [variant.name, variant.bytes]),
    ];
    if (hasTool('qpdf'))
      refused.push([
        'a user password',
        await qpdfEncrypt(space, plain, { userPassword: 'user', ownerPassword: 'owner', bits: 256 }),
      ]);
    for (const [name, bytes] of refused) {
      const full = await openPdf({ bytes }).then(
        () => 'opened',
        (error: Error) => `${error.constructor.name}: ${error.message}`,
      );
      const lazy = (() => {
        try {
          LazyPdf.open(memorySource(bytes));
          return 'opened';
        } catch (error) {
          return `${(error as Error).constructor.name}: ${(error as Error).message}`;
        }
      })();
      assert.notEqual(full, 'opened', name);
      // Objects that are not where the table says read to the engine as a file without a catalog.
      if (full === 'PdfInvalid: The PDF cannot be read (Document has no catalog)')
        assert.match(lazy, /^PdfInvalid: The PDF is damaged: its cross-reference table does not match/, name);
      else assert.equal(lazy, full, name);
    }
  });

  it('reads a few kilobytes of a 2,000-page file to reach its catalog and last page', () => {
    const bytes = manyPagesPdf(2000).bytes;
    const counting = countingSource(bytes);
    const lazy = LazyPdf.open(counting.source);
    const afterOpen = counting.read();
    const last = lazy.page(1999);
    assert.ok(last.dict instanceof PdfDict);
    // The cross-reference table (20 bytes per object) is read whole, in windows growing fourfold from
    // 64 KB; of the objects, only those asked for.
    const table = 20 * lazy.trailer.size;
    assert.ok(afterOpen < 3 * table + 64 * 1024, `opening read ${afterOpen} bytes of ${bytes.length}`);
    const read = counting.read();
    assert.ok(read - afterOpen < 64 * 1024, `the last page took ${read - afterOpen} more bytes`);
    assert.ok(read < bytes.length / 2, `${read} bytes of ${bytes.length} read`);
  });

  it('signs from a known digest of the file (a large seal hashes the original as it copies it): the file is not read again for the byte ranges, and a wrong digest would show', async () => {
    const devCa = await openDevCa({ dir: `${space.dir}/pki-known-prefix` });
    const bytes = manyPagesPdf(300).bytes;
    const signFrom = async (state: Buffer) => {
      const counting = countingSource(bytes);
      const hash = createHash('sha256').update(state);
      const source = withKnownPrefix(counting.source, {
        algorithm: 'sha256',
        bytes: bytes.length,
        state: Promise.resolve(hash),
      });
      const { appended } = await signPdfUpdate({ pdf: source, signer: devCa.sealSigner });
      const [check] = (await verifyPdf({ pdf: new Uint8Array(Buffer.concat([bytes, appended])) })).signatures;
      return { read: counting.read(), check };
    };
    const right = await signFrom(Buffer.from(bytes));
    assert.equal(right.check?.digestValid, true);
    assert.equal(right.check?.signatureValid, true);
    assert.equal(right.check?.coversWholeFile, true);
    assert.ok(right.read < bytes.length / 4, `${right.read} bytes of ${bytes.length} read`);
    const wrong = await signFrom(Buffer.from(bytes.subarray(1)));
    assert.equal(wrong.check?.digestValid, false, 'the digest given is the one signed');
  });

  describe('what it leaves to the full parse', () => {
    let devCa: DevCa;
    before(async () => {
      devCa = await openDevCa({ dir: `${space.dir}/pki` });
    });

    it('an object stream with a filter it does not decode (ASCIIHex) is signed on the full parse, intact', async () => {
      const bytes = hybridPdf({ hexObjectStream: true });
      assert.throws(() => LazyPdf.open(memorySource(bytes)).page(0), /ASCIIHexDecode/);
      // Reading (verification: readPdf) goes on on the full parse when the lazy reader meets that stream.
      assert.equal(await readPdf(bytes, (opened) => hasEngine(opened) || (opened.page(0), false)), true);
      const { pdf } = await signPdf({ pdf: bytes, signer: devCa.sealSigner });
      const [check] = (await verifyPdf({ pdf })).signatures;
      assert.equal(check?.digestValid, true);
      assert.equal(check?.signatureValid, true);
      assert.equal(check?.coversWholeFile, true);
      assert.equal(Buffer.compare(Buffer.from(pdf.subarray(0, bytes.length)), Buffer.from(bytes)), 0);
    });
  });
});

/** `bytes` as a source that counts the bytes read from it. */
function countingSource(bytes: Uint8Array): { source: ByteSource; read: () => number } {
  let read = 0;
  const memory = memorySource(bytes);
  return {
    source: {
      length: bytes.length,
      read(start, end) {
        const chunk = memory.read(start, end);
        read += chunk.length;
        return chunk;
      },
    },
    read: () => read,
  };
}

/**
 * A hybrid-reference file (ISO 32000-1 7.5.8.4): a classic table for PDF 1.4 readers whose trailer's
 * /XRefStm names a cross-reference stream listing the page, packed in an object stream (the table
 * marks it free). `hexObjectStream` writes that object stream ASCIIHex-encoded instead of deflated.
 */
function hybridPdf(options: { hexObjectStream?: boolean } = {}): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.5\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let offset = parts[0]!.length;
  const offsets = new Map<number, number>();
  const add = (number: number, body: Buffer | string): void => {
    offsets.set(number, offset);
    const chunk = Buffer.concat([
      Buffer.from(`${number} 0 obj\n`),
      Buffer.from(body),
      Buffer.from('\nendobj\n'),
    ]);
    parts.push(chunk);
    offset += chunk.length;
  };
  const stream = (dict: string, data: Buffer): Buffer =>
    Buffer.concat([
      Buffer.from(`<< ${dict} /Length ${data.length} >>\nstream\n`),
      data,
      Buffer.from('\nendstream'),
    ]);
  add(1, '<< /Type /Catalog /Pages 2 0 R >>');
  add(2, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>');
  const content = 'BT /F1 12 Tf 72 720 Td (Hybrid) Tj ET';
  add(4, stream('', Buffer.from(content)));
  add(5, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const page =
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>';
  const packed = Buffer.from(`3 0 ${page}`);
  add(
    6,
    options.hexObjectStream
      ? stream(
          '/Type /ObjStm /N 1 /First 4 /Filter /ASCIIHexDecode',
          Buffer.from(`${packed.toString('hex')}>`),
        )
      : stream('/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode', deflateSync(packed)),
  );
  const rows = Buffer.from([2, 0, 6, 0]);
  add(7, stream('/Type /XRef /Size 8 /W [1 2 1] /Index [3 1]', rows));
  const table = ['xref\n0 8\n', '0000000000 65535 f\r\n', ''];
  for (let number = 1; number < 8; number++) {
    table.push(
      number === 3
        ? '0000000000 00001 f\r\n'
        : `${String(offsets.get(number)).padStart(10, '0')} 00000 n\r\n`,
    );
  }
  table.push(`trailer\n<< /Size 8 /Root 1 0 R /XRefStm ${offsets.get(7)} >>\nstartxref\n${offset}\n%%EOF\n`);
  parts.push(Buffer.from(table.join(''), 'latin1'));
  return Buffer.concat(parts);
}

/**
 * Six pages in a nested tree: the root holds a node of two pages, a page, and a node holding a node
 * of two pages (one rotated by inheritance) and a page with its own MediaBox. Boxes and /Rotate are
 * inherited from the nodes.
 */
function nestedPageTreePdf(): Buffer {
  const page = (parent: number, extra = '') => `<< /Type /Page /Parent ${parent} 0 R${extra} >>`;
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R 6 0 R 7 0 R] /Count 6 /MediaBox [0 0 612 792] >>',
    '<< /Type /Pages /Parent 2 0 R /Kids [4 0 R 5 0 R] /Count 2 >>',
    page(3),
    page(3, ' /CropBox [10 10 500 700]'),
    page(2),
    '<< /Type /Pages /Parent 2 0 R /Kids [8 0 R 11 0 R] /Count 3 >>',
    '<< /Type /Pages /Parent 7 0 R /Kids [9 0 R 10 0 R] /Count 2 /Rotate 90 >>',
    page(8),
    page(8),
    page(7, ' /MediaBox [0 0 300 400]'),
  ]);
}
