import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import QRCode from 'qrcode';
import { ManualClock } from '../../src/base/clock.js';
import { aSignedDocument, download, mainFileOf, readDocument } from '../helpers/documents.js';
import { makePdf } from '../helpers/pdf.js';
import { startServer, type ApiResponse, type TestServer } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';

const MB = 1024 * 1024;
const SIGNATURE = {
  type: 'signature',
  pages: [1],
  position: { percentX: 0.1, percentY: 0.8, percentWidth: 0.2, percentHeight: 0.05 },
};

/** POST /verify at the site's root, as the page sends it: multipart `file`, no credential. */
function publicVerify(
  server: TestServer,
  bytes: Buffer,
  options: { query?: Record<string, string>; name?: string; token?: string } = {},
): Promise<ApiResponse> {
  return server.api('POST', '//verify', {
    ...(options.query ? { query: options.query } : {}),
    ...(options.token ? { headers: { authorization: `Bearer ${options.token}` } } : {}),
    form: { file: { name: options.name ?? 'signed.pdf', type: 'application/pdf', bytes } },
  });
}

function assertErrorShape(response: ApiResponse, status: number, code: string): void {
  assert.equal(response.status, status, response.text);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(Object.keys(response.body).sort(), ['code', 'error', 'message', 'statusCode']);
  assert.equal(response.body.statusCode, status);
  assert.equal(response.body.code, code);
}

/** Every file under `dir` (the blob store's folders), as paths. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

/** What the installation holds: file rows, blobs on disk, audit records, events. */
async function holdings(server: TestServer) {
  const { db } = server.app.deps;
  const count = async (table: 'files' | 'audit_log' | 'events') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    files: await count('files'),
    auditRecords: await count('audit_log'),
    events: await count('events'),
    blobs: (await filesUnder(join(server.dataDir, 'blobs'))).length,
    temporary: (await filesUnder(join(server.dataDir, 'tmp'))).length,
  };
}

/**
 * Issue 27 item 2: "A public verification page. PUBLIC_URL/verify: anyone, without an account, drops
 * a PDF and sees … Rate-limited, no upload kept, size-capped." Its endpoint, POST /verify at the
 * site's root, answers the report of POST /api/v1/verify; the document barcode leads to the page.
 */
describe('the public verification endpoint POST /verify answers from the file alone', () => {
  const server = useServer({ env: { PUBLIC_VERIFY_MAX_MB: '1', PUBLIC_URL: 'https://sign.example.org' } });
  let token: string;
  let documentId: string;
  let signed: Buffer;
  before(async () => {
    token = await server.adminToken();
    documentId = await aSignedDocument(server, token, { title: 'Public', signatures: [SIGNATURE] });
    signed = await mainFileOf(server, token, documentId);
  });

  it('needs no account and answers the report of the authenticated POST /api/v1/verify; dss=true adds the ETSI reports', async () => {
    const open = await publicVerify(server, signed);
    assert.equal(open.status, 200, open.text);
    const authenticated = await server.api('POST', '/verify', {
      token,
      form: { file: { name: 'signed.pdf', type: 'application/pdf', bytes: signed } },
    });
    assert.equal(authenticated.status, 200, authenticated.text);
    const { validationTime: _a, ...publicReport } = open.body;
    const { validationTime: _b, ...privateReport } = authenticated.body;
    assert.deepEqual(publicReport, privateReport);
    assert.equal(open.body.signatures.length, 1);
    assert.equal(open.body.signatures[0].indication, 'TOTAL_PASSED');
    assert.equal(open.body.dss, undefined);

    const withDss = await publicVerify(server, signed, { query: { dss: 'true' } });
    assert.equal(withDss.status, 200, withDss.text);
    assert.match(withDss.body.dss.validationReport, /ValidationReport/);
    assert.match(withDss.body.dss.simpleReport, /SimpleReport/);

    // A credential changes nothing (none is read), and the API's own route still asks for one.
    assert.equal((await publicVerify(server, signed, { token: 'not-a-token' })).status, 200);
    const anonymousApi = await server.api('POST', '/verify', {
      form: { file: { name: 'signed.pdf', type: 'application/pdf', bytes: signed } },
    });
    assertErrorShape(anonymousApi, 401, 'UNAUTHENTICATED');
  });

  it('a tampered PDF is reported broken, with what broke', async () => {
    // One byte of the page's text, inside the signed range: `(Page 1)` becomes `(Qage 1)`.
    const tampered = Buffer.from(signed);
    const offset = tampered.indexOf('(Page 1)') + 1;
    assert.ok(offset > 0 && offset < (await publicVerify(server, signed)).body.signatures[0].byteRange[1]);
    tampered[offset] = tampered[offset]! ^ 0x01;
    const report = await publicVerify(server, tampered);
    assert.equal(report.status, 200, report.text);
    assert.equal(report.body.signatures[0].digestValid, false);
    assert.equal(report.body.signatures[0].indication, 'TOTAL_FAILED');
    assert.equal(report.body.signatures[0].subIndication, 'HASH_FAILURE');
  });

  it('keeps nothing: no file row, no blob, no temporary file, no audit record or event', async () => {
    const before = await holdings(server);
    assert.ok(before.files > 0 && before.blobs > 0, 'the count sees what the signed document stored');
    for (const bytes of [signed, Buffer.from('not a pdf'), Buffer.alloc(MB + 1, 0x25)])
      await publicVerify(server, bytes);
    await publicVerify(server, signed, { query: { dss: 'true' } });
    assert.deepEqual(await holdings(server), before);
  });

  it(`past PUBLIC_VERIFY_MAX_MB (here 1 MB) the answer is 413 LIMIT_EXCEEDED, whether announced or found while reading`, async () => {
    const justOver = Buffer.concat([makePdf(), Buffer.alloc(MB, 0x20)]);
    assert.ok(justOver.length > MB && justOver.length < MB + 64 * 1024);
    const streamed = await publicVerify(server, justOver);
    assertErrorShape(streamed, 413, 'LIMIT_EXCEEDED');
    assert.match(streamed.body.message, /larger than the limit of 1 MB/);
    const announced = await publicVerify(server, Buffer.alloc(4 * MB, 0x20));
    assertErrorShape(announced, 413, 'LIMIT_EXCEEDED');
    // At the limit it is read (and found not to be a readable PDF), not refused.
    const atLimit = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(MB - 9, 0x20)]);
    assert.equal(atLimit.length, MB);
    assertErrorShape(await publicVerify(server, atLimit), 400, 'VALIDATION_ERROR');
  });

  it('a file that is not a PDF, or no file, is 400 VALIDATION_ERROR in the JSON error shape', async () => {
    const notPdf = await publicVerify(server, Buffer.from('Just some text, no PDF header.'), {
      name: 'a.txt',
    });
    assertErrorShape(notPdf, 400, 'VALIDATION_ERROR');
    assert.match(notPdf.body.message, /"file" is not a PDF/);
    const broken = await publicVerify(server, Buffer.from('%PDF-1.7\nnothing else'));
    assertErrorShape(broken, 400, 'VALIDATION_ERROR');
    const none = await server.api('POST', '//verify', { form: { fields: { note: 'x' } } });
    assertErrorShape(none, 400, 'VALIDATION_ERROR');
  });

  it('GET /verify is the page (HTML, the signer page’s policy); the OpenAPI document does not list the endpoint', async () => {
    const page = await fetch(`${server.url}/verify?document=${documentId}`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    assert.equal(page.headers.get('cache-control'), 'no-store');
    const html = await page.text();
    assert.match(html, /<script type="module"[^>]*src="\/web\/assets\/verify-[\w-]{8}\.js"/);
    assert.doesNotMatch(html, new RegExp(documentId), 'the address is not echoed into the page');
    const spec = (await server.api('GET', '/openapi.json')).body;
    assert.deepEqual(
      Object.keys(spec.paths).filter((p) => p === '/verify'),
      [],
    );
    assert.ok(spec.paths['/api/v1/verify'].post, 'the API’s own POST /verify is unchanged');
  });

  it('the document barcode encodes PUBLIC_URL/verify?document=<id>, no longer the API address (which answers 401 to a stranger)', async () => {
    const doc = await readDocument(server, token, documentId);
    const png = await download(server, token, doc.barcode as string);
    // Drawn as create-document draws it (src/documents/barcode.ts), from the address expected.
    const options = { type: 'png', errorCorrectionLevel: 'M', margin: 1, width: 256 } as const;
    const expected = await QRCode.toBuffer(`https://sign.example.org/verify?document=${documentId}`, options);
    assert.ok(png.equals(expected), 'the QR code holds the page’s address');
    const old = await QRCode.toBuffer(
      `https://sign.example.org/api/v1/documents/${documentId}/verify`,
      options,
    );
    assert.ok(!png.equals(old));
  });
});

describe('the public verification endpoint has its own limits and switch', () => {
  const servers: TestServer[] = [];
  after(async () => {
    for (const server of servers) await server.close();
  });

  it('is rate-limited per client address under its own policy (public-verify): 429 RATE_LIMITED with Retry-After, whatever token is sent', async () => {
    // Windows are whole minutes: a clock that stands still a second into one keeps the three calls in
    // it, however slow the machine (on a loaded one they once straddled a minute: r=1 on the second).
    const clock = new ManualClock(new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 1000));
    const server = await startServer({ clock, env: { RATE_LIMIT_PUBLIC_VERIFY_PER_MINUTE: '2' } });
    servers.push(server);
    const pdf = makePdf();
    for (const remaining of [1, 0]) {
      const answer = await publicVerify(server, pdf);
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.headers.get('ratelimit-policy'), '"public-verify";q=2;w=60');
      assert.match(
        answer.headers.get('ratelimit') ?? '',
        new RegExp(`^"public-verify";r=${remaining};t=\\d+$`),
      );
    }
    const token = await server.adminToken();
    const refused = await publicVerify(server, pdf, { token });
    assertErrorShape(refused, 429, 'RATE_LIMITED');
    assert.match(
      refused.body.message,
      /at most 2 a minute per client address on the public verification page/,
    );
    const seconds = Number(refused.headers.get('retry-after'));
    assert.ok(Number.isInteger(seconds) && seconds >= 1 && seconds <= 60, `Retry-After: ${seconds}`);
    // Other calls of the same address keep their own allowance.
    assert.equal((await fetch(`${server.url}/verify`)).status, 200);
    assert.equal((await server.api('GET', '/login', { token })).status, 200);
  });

  it('PUBLIC_VERIFY=off: no page, no endpoint, and the barcode keeps the API address', async () => {
    const server = await startServer({
      env: { PUBLIC_VERIFY: 'off', PUBLIC_URL: 'https://sign.example.org' },
    });
    servers.push(server);
    assert.equal((await fetch(`${server.url}/verify`)).status, 404);
    assertErrorShape(await publicVerify(server, makePdf()), 404, 'NOT_FOUND');
    const token = await server.adminToken();
    const id = await aSignedDocument(server, token, { signatures: [SIGNATURE] });
    const png = await download(server, token, (await readDocument(server, token, id)).barcode as string);
    const options = { type: 'png', errorCorrectionLevel: 'M', margin: 1, width: 256 } as const;
    const api = await QRCode.toBuffer(`https://sign.example.org/api/v1/documents/${id}/verify`, options);
    assert.ok(png.equals(api));
  });
});
