import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { ConfigError, loadConfig } from '../../src/base/config.js';
import { TICKET_SECONDS } from '../../src/http/file-tickets.js';
import { readDocument } from '../helpers/documents.js';
import { freePort } from '../helpers/free-port.js';
import { PNG_1PX } from '../helpers/pdf.js';
import { aUser, withMail } from '../helpers/people.js';
import { upload } from '../helpers/server.js';
import { anExternalShare, signByLink } from '../helpers/sharing.js';
import { useServer } from '../helpers/use-server.js';

const PAGE = Buffer.from('<!doctype html><script>fetch("/api/v1/api/key",{method:"POST"})</script>');

/**
 * DESIGN, "Files answered to a browser": "FILES_PUBLIC_URL (optional) serves downloads from a
 * separate origin, as large platforms do for user content" (issue 37). The API checks rights and
 * answers 303 to a short-lived ticket on that origin; the files origin answers tickets and nothing
 * else. Here the API is http://127.0.0.1:<port> and the files origin http://localhost:<port>: two
 * origins of one server, as a browser sees them.
 */
describe('DESIGN, FILES_PUBLIC_URL: user files are downloaded from a separate origin', () => {
  let port = 0;
  before(async () => {
    port = await freePort();
  });
  const clock = new ManualClock(new Date());
  const server = useServer(() => ({
    smtp: true,
    port,
    clock,
    env: { PUBLIC_URL: `http://127.0.0.1:${port}`, FILES_PUBLIC_URL: `http://localhost:${port}` },
  }));
  const filesOrigin = () => `http://localhost:${port}`;
  let owner: string;
  before(async () => {
    owner = (await aUser(server, withMail('owner'))).token;
  });

  /** A download on the API: its 303, checked, and the ticket's address. */
  async function redirectOf(path: string, token: string): Promise<string> {
    const response = await fetch(`${server.url}/api/v1${path}?token=${token}`, { redirect: 'manual' });
    assert.equal(response.status, 303, `${path}: ${await response.text()}`);
    const location = response.headers.get('location') ?? '';
    assert.ok(location.startsWith(`${filesOrigin()}/f/`), location);
    assert.doesNotMatch(location, /token|shr_|shs_/i, 'no credential travels to the files origin');
    assert.ok(!location.includes(token));
    assert.equal(response.headers.get('cache-control'), 'no-store');
    return location;
  }

  function assertInert(response: Response, what: string): void {
    assert.equal(response.status, 200, what);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff', what);
    assert.equal(response.headers.get('content-security-policy'), "sandbox; default-src 'none'", what);
    assert.doesNotMatch(response.headers.get('content-type') ?? '', /html|svg|xml|text\//, what);
    assert.equal(response.headers.get('access-control-allow-origin'), '*', what);
    assert.equal(response.headers.get('cache-control'), 'private, no-store', what);
    assert.equal(response.headers.get('set-cookie'), null, what);
  }

  it('every stored-file download answers 303 to a ticket on FILES_PUBLIC_URL, which answers the bytes, inert; the ticket honours Range', async () => {
    const own = await upload(server, owner, PAGE, { name: 'p.html', type: 'text/html' });
    const location = await redirectOf(`/files/loadFile/hash/${own}`, owner);
    assert.ok(location.endsWith('/p.html'), 'the file name ends the address (for Save as)');
    const bytes = await fetch(location);
    assertInert(bytes, 'own upload');
    assert.match(bytes.headers.get('content-disposition') ?? '', /^attachment;/);
    assert.deepEqual(Buffer.from(await bytes.arrayBuffer()), PAGE);
    const ranged = await fetch(location, { headers: { range: 'bytes=2-5' } });
    assert.equal(ranged.status, 206);
    assert.equal(await ranged.text(), PAGE.subarray(2, 6).toString());
    // fetch follows it, as browsers, the client and `curl -L` do; the Authorization header does not
    // go along to the other origin.
    const followed = await fetch(`${server.url}/api/v1/files/loadFile/hash/${own}`, {
      headers: { authorization: `Bearer ${owner}` },
    });
    assert.equal(followed.status, 200);
    assert.ok(followed.url.startsWith(`${filesOrigin()}/f/`));

    // A stamp of the user's, a recipient's stamp, a recipient's attachment and the signed copy.
    const stampFile = await upload(server, owner, PNG_1PX, { name: 'stamp.png', type: 'image/png' });
    const stamp = await server.api('POST', '/stamps', {
      token: owner,
      body: { name: 'Company', file: stampFile },
    });
    assert.equal(stamp.status, 200, stamp.text);
    assertInert(await fetch(await redirectOf(`/stamps/${stamp.body.id}/image`, owner)), 'user stamp');

    const shared = await anExternalShare(server, owner, {
      title: 'Ticketed',
      email: 'signer@example.org',
      recipient: { rights: ['uploadFiles'] },
    });
    const theirStamp = await server.api('POST', '/share/upload/stamp', {
      token: shared.link,
      form: { fields: { name: 'Seal' }, file: { name: 'seal.png', type: 'text/html', bytes: PNG_1PX } },
    });
    assert.equal(theirStamp.status, 200, theirStamp.text);
    const stampBytes = await fetch(await redirectOf(`/share/stamp/${theirStamp.body.id}`, shared.link));
    assertInert(stampBytes, 'recipient stamp');
    assert.equal(stampBytes.headers.get('content-type'), 'image/png');
    const attached = await server.api('POST', '/share/upload/file', {
      token: shared.link,
      form: { fields: { attach: 'true' }, file: { name: 'p.html', type: 'text/html', bytes: PAGE } },
    });
    assert.equal(attached.status, 200, attached.text);
    const attachedBytes = await fetch(
      await redirectOf(`/files/loadFile/hash/${attached.body.file.id}`, shared.link),
    );
    assertInert(attachedBytes, 'recipient attachment');
    assert.equal(attachedBytes.headers.get('content-type'), 'application/octet-stream');

    const signature = { percentX: 0.1, percentY: 0.85, percentWidth: 0.2, percentHeight: 0.06 };
    const signed = await signByLink(server, shared.link, shared.id, [
      { type: 'signature', position: signature },
    ]);
    assert.equal(signed.status, 200, signed.text);
    const copy = await fetch(await redirectOf('/share/signed', shared.link));
    assertInert(copy, 'signed copy');
    assert.equal(copy.headers.get('content-type'), 'application/pdf');
    assert.match(copy.headers.get('content-disposition') ?? '', /^attachment;/);
  });

  it('the files origin answers tickets and nothing else: no API, no page, no cookie; the API origin answers no ticket', async () => {
    const own = await upload(server, owner, PAGE, { name: 'p.html', type: 'text/html' });
    const location = await redirectOf(`/files/loadFile/hash/${own}`, owner);
    for (const path of [
      `/api/v1/files/loadFile/hash/${own}?token=${owner}`,
      `/api/v1/users?token=${owner}`,
      '/api/v1/openapi.json',
      '/api/v1/docs',
      '/',
      '/verify',
      '/health/ready',
    ]) {
      const response = await fetch(`${filesOrigin()}${path}`, { redirect: 'manual' });
      assert.equal(response.status, 404, `${path} on the files origin`);
      assert.equal(((await response.json()) as { code: string }).code, 'NOT_FOUND');
    }
    const login = await fetch(`${filesOrigin()}/api/v1/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'admin', password: 'x' }),
    });
    assert.equal(login.status, 404);
    assert.equal(login.headers.get('set-cookie'), null);
    // The same ticket, asked of the API's origin.
    const onApi = await fetch(location.replace(filesOrigin(), server.url));
    assert.equal(onApi.status, 404);
    // The signer page may fetch from the files origin, and only it besides itself.
    const page = await fetch(`${server.url}/`);
    assert.match(
      page.headers.get('content-security-policy') ?? '',
      new RegExp(`connect-src 'self' ${filesOrigin()};`),
    );
  });

  it('a ticket opens its one file for a few minutes: altered, expired or for a file since deleted, it is 404', async () => {
    const own = await upload(server, owner, PAGE, { name: 'p.html', type: 'text/html' });
    const location = await redirectOf(`/files/loadFile/hash/${own}`, owner);
    const ticket = new URL(location).pathname.split('/')[2]!;
    const flipped = ticket.slice(0, -3) + (ticket.at(-3) === 'A' ? 'B' : 'A') + ticket.slice(-2);
    for (const bad of [
      flipped,
      'sealed.v1.0000.AAAA.AAAA.AAAA',
      'x',
      ticket.replace('sealed.v1', 'sealed.v2'),
    ]) {
      const response = await fetch(`${filesOrigin()}/f/${bad}/p.html`);
      assert.equal(response.status, 404, bad);
    }
    // Another name at the end does not change what it opens (the name is only for Save as).
    assert.deepEqual(
      Buffer.from(await (await fetch(`${filesOrigin()}/f/${ticket}/other.txt`)).arrayBuffer()),
      PAGE,
    );

    clock.advance((TICKET_SECONDS + 1) * 1000);
    assert.equal((await fetch(location)).status, 404, 'expired');
    const fresh = await redirectOf(`/files/loadFile/hash/${own}`, owner);
    assert.equal((await fetch(fresh)).status, 200);

    // A document hard-deleted: its file's tickets open nothing.
    const shared = await anExternalShare(server, owner, { title: 'Erased', email: 'e@example.org' });
    const mainFile = (await readDocument(server, owner, shared.id)).pdfFile.content as string;
    const before = await redirectOf(`/files/loadFile/hash/${mainFile}`, owner);
    assert.equal((await fetch(before)).status, 200);
    const removed = await server.api('DELETE', '/documents', {
      token: owner,
      query: { hardDelete: 'true' },
      body: { documents: [{ id: shared.id }] },
    });
    assert.equal(removed.status, 200, removed.text);
    assert.equal((await fetch(before)).status, 404, 'the file record is gone');
  });

  it('FILES_PUBLIC_URL must be an origin of its own: the same origin as PUBLIC_URL, a path or another scheme is refused at start', () => {
    const base = { PUBLIC_URL: 'https://sign.example.com' };
    for (const bad of [
      'https://sign.example.com',
      'https://sign.example.com/',
      'https://files.example.com/downloads',
      'ftp://files.example.com',
      'files.example.com',
    ]) {
      assert.throws(() => loadConfig({ ...base, FILES_PUBLIC_URL: bad }), ConfigError, bad);
    }
    assert.equal(
      loadConfig({ ...base, FILES_PUBLIC_URL: 'https://files.example-usercontent.com/' }).filesPublicUrl,
      'https://files.example-usercontent.com',
    );
    assert.equal(loadConfig(base).filesPublicUrl, undefined);
  });
});
