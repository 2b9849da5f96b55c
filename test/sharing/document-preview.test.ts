import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { loadImage, createCanvas, type Image } from '@napi-rs/canvas';
import { buildPdf } from '../fixtures/pdf-fixtures.js';
import { aUser, withMail } from '../helpers/people.js';
import { anExternalShare, linkOf, previewAheadJob, signByLink } from '../helpers/sharing.js';
import { useServer } from '../helpers/use-server.js';

const run = promisify(execFile);

/** Mean luminance (0–255) of each cell of a `cells` × `cells` grid laid over the image. */
function luminanceGrid(image: Image, cells: number): number[] {
  const canvas = createCanvas(image.width, image.height);
  const context = canvas.getContext('2d');
  context.drawImage(image, 0, 0);
  const { data } = context.getImageData(0, 0, image.width, image.height);
  const sums = new Array<number>(cells * cells).fill(0);
  const counts = new Array<number>(cells * cells).fill(0);
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      const i = (y * image.width + x) * 4;
      const cell = Math.floor((y * cells) / image.height) * cells + Math.floor((x * cells) / image.width);
      sums[cell]! += 0.299 * data[i]! + 0.587 * data[i + 1]! + 0.114 * data[i + 2]!;
      counts[cell]!++;
    }
  }
  return sums.map((sum, cell) => sum / counts[cell]!);
}

const largestDifference = (a: number[], b: number[]) =>
  Math.max(...a.map((value, i) => Math.abs(value - b[i]!)));

/**
 * Issue 25: "the first page visible within 2 s on a slow phone profile". pdf.js alone is 440 KB a new
 * visitor's phone must fetch first; the page shows the first page as an image drawn by the server
 * (GET /share/document/preview) meanwhile. The image is checked against MuPDF's drawing of the same
 * page, and its access against GET /share/document's.
 */
describe('the first page as an image while the viewer loads (GET /share/document/preview)', () => {
  const server = useServer({ smtp: true });
  let owner: string;
  let work: string;
  before(async () => {
    owner = (await aUser(server, withMail('owner'))).token;
    work = await mkdtemp(join(tmpdir(), 'signery-preview-'));
  });
  after(() => rm(work, { recursive: true, force: true }));

  // Two pages MuPDF and the preview must tell apart: large words in opposite corners, the first page
  // turned a quarter (a landscape image).
  const pdf = Buffer.from(
    buildPdf({
      pages: [
        { rotate: 90, texts: [{ x: 60, y: 640, text: 'FIRST', size: 110 }] },
        { texts: [{ x: 250, y: 80, text: 'SECOND', size: 80 }] },
      ],
    }).bytes,
  );
  const preview = (token: string, headers: Record<string, string> = {}, query = '') =>
    fetch(`${server.url}/api/v1/share/document/preview${query}`, {
      headers: { authorization: `Bearer ${token}`, ...headers },
    });
  /** MuPDF's drawing of `page`, as wide as the preview. */
  async function mupdf(page: number, width: number): Promise<Image> {
    const input = join(work, 'in.pdf');
    const output = join(work, `page-${page}.png`);
    await writeFile(input, pdf);
    await run('mutool', ['draw', '-q', '-w', String(width), '-o', output, input, String(page)]);
    return loadImage(await readFile(output));
  }

  it('is the first page as MuPDF draws it, 640 px wide, turned as the page is', async () => {
    const { link } = await anExternalShare(server, owner, { title: 'Preview', email: 'p1@example.org', pdf });
    const answer = await preview(link);
    assert.equal(answer.status, 200, await answer.clone().text());
    assert.equal(answer.headers.get('content-type'), 'image/webp');
    assert.equal(answer.headers.get('cache-control'), 'private, no-store');
    const bytes = Buffer.from(await answer.arrayBuffer());
    assert.equal(bytes.subarray(0, 4).toString('latin1'), 'RIFF');
    assert.equal(bytes.subarray(8, 12).toString('latin1'), 'WEBP');
    assert.equal(Number(answer.headers.get('content-length')), bytes.length);
    const image = await loadImage(bytes);
    assert.equal(image.width, 640);
    assert.equal(image.height, Math.round((640 * 612) / 792), 'the page is turned: landscape');

    const ours = luminanceGrid(image, 12);
    const first = luminanceGrid(await mupdf(1, 640), 12);
    const second = luminanceGrid(await mupdf(2, 640), 12);
    assert.ok(Math.min(...ours) < 200, 'the words are drawn');
    assert.ok(
      largestDifference(ours, first) < 24,
      `as MuPDF draws page 1 (${largestDifference(ours, first)})`,
    );
    assert.ok(largestDifference(ours, second) > 48, 'not page 2');
  });

  it('is drawn ahead when an invitation goes out, for the PDF the recipient will open', async () => {
    const { id } = await anExternalShare(server, owner, { title: 'Ahead', email: 'p0@example.org', pdf });
    const job = await previewAheadJob(server, id);
    assert.equal(job?.status, 'done', JSON.stringify(job));
    assert.equal(job?.last_error, null);
  });

  it('answers 304 to its tag until the PDF changes, then the new first page', async () => {
    const { id, link } = await anExternalShare(server, owner, {
      title: 'Two signers',
      email: 'p2@example.org',
      pdf,
    });
    await server.api('POST', '/share', {
      token: owner,
      body: { id, data: [{ sharePurpose: 'sign', shareTo: 'p3@example.org' }] },
    });
    const second = await linkOf(server.smtp, 'p3@example.org', /Two signers/);
    const before = await preview(second);
    const tag = before.headers.get('etag')!;
    assert.match(tag, /^"preview-[0-9a-f]{64}"$/);
    const unchanged = await preview(second, { 'if-none-match': tag });
    assert.equal(unchanged.status, 304);
    assert.equal((await unchanged.arrayBuffer()).byteLength, 0);

    const signed = await signByLink(server, link, id, [
      {
        type: 'signature',
        position: { percentX: 0.6, percentY: 0.6, percentWidth: 0.3, percentHeight: 0.1 },
      },
    ]);
    assert.equal(signed.status, 200, signed.text);
    const after = await preview(second, { 'if-none-match': tag });
    assert.equal(after.status, 200, 'the PDF changed: a new image');
    assert.notEqual(after.headers.get('etag'), tag);
  });

  it('goes to whoever may read GET /share/document, and no one else', async () => {
    const { id, link } = await anExternalShare(server, owner, {
      title: 'Protected preview',
      email: 'p4@example.org',
      pdf,
      recipient: { password: 'open sesame' },
    });
    const locked = await preview(link);
    assert.equal(locked.status, 403);
    assert.equal(((await locked.json()) as { code: string }).code, 'MFA_REQUIRED');
    const unlocked = await server.api('POST', '/share/unlock', {
      token: link,
      body: { password: 'open sesame' },
    });
    const session = unlocked.body.token as string;
    assert.equal((await preview(session)).status, 200);

    // A user who is not a recipient of the document: not found, as for GET /share/document?id=.
    const stranger = (await aUser(server, withMail('stranger'))).token;
    const notShared = await preview(stranger, {}, `?id=${id}`);
    assert.equal(notShared.status, 404);
    assert.equal(((await notShared.json()) as { code: string }).code, 'NOT_FOUND');

    // The share's end takes effect at once: no image kept for it.
    const cancelled = await server.api('POST', '/share/cancel', { token: owner, body: { id } });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal((await preview(session)).status, 401);
  });
});
