import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { makePdf } from '../helpers/pdf.js';
import { NoPreview, PagePreviews, type PreviewLimits } from '../../src/pdf/preview/page-previews.js';

/** A PDF with its hash, and a reader of it that counts how often the previews needed its bytes. */
function source(bytes: Buffer) {
  const read = { count: 0 };
  return {
    sha256: createHash('sha256').update(bytes).digest('hex'),
    size: bytes.length,
    read,
    bytes: () => {
      read.count++;
      return Promise.resolve(new Uint8Array(bytes));
    },
  };
}

/**
 * The limits of the server's page drawing (pdf/preview/page-previews.ts): untrusted PDFs are drawn in
 * a worker thread under a time and a memory limit, each once; what could not be drawn is remembered,
 * so a hostile file costs its time limit once, not at every request.
 */
describe('page previews: drawn once per content, under limits', () => {
  const opened: PagePreviews[] = [];
  const previews = (limits: Partial<PreviewLimits> = {}) => {
    const made = new PagePreviews(limits);
    opened.push(made);
    return made;
  };
  after(() => Promise.all(opened.map((p) => p.close())));

  it('draws a PDF once, for callers asking together and after', async () => {
    const drawer = previews();
    const pdf = source(makePdf({ lines: ['Hello'] }));
    const [a, b] = await Promise.all([
      drawer.firstPage(pdf.sha256, pdf.size, pdf.bytes),
      drawer.firstPage(pdf.sha256, pdf.size, pdf.bytes),
    ]);
    assert.equal(a, b);
    assert.equal(a.width, 640);
    assert.equal(a.height, Math.round((640 * 792) / 612));
    assert.equal(Buffer.from(a.image.subarray(8, 12)).toString('latin1'), 'WEBP');
    await drawer.firstPage(pdf.sha256, pdf.size, pdf.bytes);
    assert.equal(pdf.read.count, 1);
  });

  it('refuses what it cannot draw, once: not a PDF, too large, out of time', async () => {
    const drawer = previews();
    const garbage = source(Buffer.from('%PDF-1.7\nthis is not a PDF at all\n'));
    const first = await drawer
      .firstPage(garbage.sha256, garbage.size, garbage.bytes)
      .catch((e: unknown) => e);
    assert.ok(first instanceof NoPreview, String(first));
    assert.match(first.message, /could not be drawn/);
    const again = await drawer
      .firstPage(garbage.sha256, garbage.size, garbage.bytes)
      .catch((e: unknown) => e);
    assert.equal(again, first, 'remembered');
    assert.equal(garbage.read.count, 1);

    const large = source(makePdf());
    await assert.rejects(drawer.firstPage(large.sha256, 33 * 1024 * 1024, large.bytes), /too large/);
    assert.equal(large.read.count, 0, 'not even read');

    // No worker starts and draws within a millisecond: the time limit ends it, and the pool goes on.
    const hurried = previews({ timeLimitMs: 1 });
    const slow = source(makePdf({ lines: ['Slow'] }));
    await assert.rejects(hurried.firstPage(slow.sha256, slow.size, slow.bytes), /took longer than/);
    await assert.rejects(hurried.firstPage(slow.sha256, slow.size, slow.bytes), /took longer than/);
    assert.equal(slow.read.count, 1);
    const other = source(makePdf({ lines: ['Other'] }));
    const drawn = await drawer.firstPage(other.sha256, other.size, other.bytes);
    assert.equal(drawn.width, 640);
  });

  it('draws no more than its queue holds, and keeps no more than its cache holds', async () => {
    const drawer = previews({ maxWaiting: 1, cacheBytes: 1 });
    const a = source(makePdf({ lines: ['A'] }));
    const b = source(makePdf({ lines: ['B'] }));
    const drawing = drawer.firstPage(a.sha256, a.size, a.bytes);
    await assert.rejects(drawer.firstPage(b.sha256, b.size, b.bytes), /busy/);
    await drawing;
    await drawer.firstPage(b.sha256, b.size, b.bytes);
    await drawer.firstPage(a.sha256, a.size, a.bytes);
    assert.equal(a.read.count, 2, 'a cache of one byte keeps nothing: drawn again');
  });
});
