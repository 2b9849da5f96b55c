import assert from 'node:assert/strict';
import { createCanvas } from '@napi-rs/canvas';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { filesNamed } from '../helpers/documents.js';
import { makePdf, PNG_1PX } from '../helpers/pdf.js';
import { startS3rver, type RunningS3 } from '../helpers/s3rver.js';
import { createUser, startServer, upload, type TestServer } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';

for (const store of ['fs', 's3'] as const) {
  describe(`uploads and downloads on the ${store} blob store`, () => {
    let s3: RunningS3 | undefined;
    let server: TestServer;
    let token: string;
    before(async () => {
      s3 = store === 's3' ? await startS3rver() : undefined;
      server = await startServer({ env: s3?.env ?? {} });
      token = await server.adminToken();
    });
    after(async () => {
      await server.close();
      await s3?.close();
    });

    it('POST /files/saveFile answers the File record: id (= hash = fileId), documentname, mimetype, size, checksum, pages, storage', async () => {
      const pdf = makePdf({ pages: 3 });
      const response = await server.api('POST', '/files/saveFile', {
        token,
        form: {
          fields: { fileName: 'contract.pdf' },
          file: { name: 'upload.pdf', type: 'application/pdf', bytes: pdf },
        },
      });
      assert.equal(response.status, 200, response.text);
      const { file, storage } = response.body;
      assert.match(file.id, /^[0-9a-f]{32}$/);
      assert.equal(file.hash, file.id);
      assert.equal(file.fileId, file.id);
      assert.equal(file.documentname, 'contract.pdf');
      assert.equal(file.mimetype, 'application/pdf');
      assert.equal(file.size, pdf.length);
      assert.equal(file.pages, 3);
      assert.equal(file.checksum, createHash('sha512').update(pdf).digest('hex'));
      assert.equal(storage.limit, 10 * 1024 * 1024 * 1024);
      assert.ok(storage.used >= pdf.length);
      assert.equal(response.body.anchorPositions, undefined, 'only when anchors were sent');
    });

    it('GET /files/loadFile/hash/:hash returns the bytes with Content-Type and Content-Length, and honours Range', async () => {
      const bytes = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));
      const id = await upload(server, token, bytes, { name: 'data.bin', type: 'application/octet-stream' });
      const whole = await fetch(`${server.url}/api/v1/files/loadFile/hash/${id}?token=${token}`);
      assert.equal(whole.status, 200);
      assert.equal(whole.headers.get('content-type'), 'application/octet-stream');
      assert.equal(whole.headers.get('content-length'), '5000');
      assert.deepEqual(Buffer.from(await whole.arrayBuffer()), bytes);
      const part = await fetch(`${server.url}/api/v1/files/loadFile/hash/${id}?token=${token}`, {
        headers: { range: 'bytes=100-199' },
      });
      assert.equal(part.status, 206);
      assert.equal(part.headers.get('content-range'), 'bytes 100-199/5000');
      assert.deepEqual(Buffer.from(await part.arrayBuffer()), bytes.subarray(100, 200));
      const suffix = await fetch(`${server.url}/api/v1/files/loadFile/hash/${id}?token=${token}`, {
        headers: { range: 'bytes=-10' },
      });
      assert.deepEqual(Buffer.from(await suffix.arrayBuffer()), bytes.subarray(4990));
      const beyond = await server.api('GET', `/files/loadFile/hash/${id}`, {
        token,
        headers: { range: 'bytes=6000-7000' },
      });
      assert.equal(beyond.status, 416);
      assert.equal(beyond.body.code, 'RANGE_NOT_SATISFIABLE');
    });

    it('a file is readable only by callers who may see it: another user gets 404', async () => {
      const id = await upload(server, token, makePdf());
      await createUser(server, { name: `other-${store}` });
      const other = await server.login(`other-${store}`, 'user-password-1');
      const response = await server.api('GET', `/files/loadFile/hash/${id}`, { token: other });
      assert.equal(response.status, 404);
      assert.equal(response.body.code, 'NOT_FOUND');
    });

    it('POST /files/signature and /files/initials answer JSON and list the image in user.config', async () => {
      const signature = await server.api('POST', '/files/signature', {
        token,
        form: {
          fields: { fileName: 'My signature' },
          file: { name: 's.png', type: 'image/png', bytes: PNG_1PX },
        },
      });
      assert.equal(signature.status, 200);
      assert.match(signature.headers.get('content-type') ?? '', /application\/json/);
      const initials = await server.api('POST', '/files/initials', {
        token,
        form: { file: { name: 'i.png', type: 'image/png', bytes: PNG_1PX } },
      });
      assert.equal(initials.status, 200);
      const photo = await server.api('POST', '/files/photo', {
        token,
        form: { file: { name: 'me.png', type: 'image/png', bytes: PNG_1PX } },
      });
      assert.equal(photo.status, 200);
      const me = await server.api('GET', '/login', { token });
      assert.deepEqual(me.body.user.config.signature.at(-1), {
        imageId: signature.body.file.id,
        name: 'My signature',
      });
      assert.deepEqual(me.body.user.config.initials.at(-1), {
        imageId: initials.body.file.id,
        name: 'i.png',
      });
    });

    it('usage rule 2: signature and initials images are refused at upload unless the bytes are PNG or JPEG, whatever the declared type', async () => {
      const before = await server.app.deps.db.selectFrom('files').select('id').execute();
      for (const path of ['/files/signature', '/files/initials']) {
        for (const bytes of [makePdf(), Buffer.from('GIF89a not drawable'), Buffer.alloc(0)]) {
          const response = await server.api('POST', path, {
            token,
            form: { file: { name: 'sig.png', type: 'image/png', bytes } },
          });
          assert.equal(response.status, 400, `${path}: ${response.text}`);
          assert.equal(response.body.code, 'VALIDATION_ERROR');
          assert.match(response.body.message, /"file" must be a PNG or JPEG image/);
        }
      }
      const jpeg = createCanvas(4, 4).toBuffer('image/jpeg');
      const declaredPdf = await server.api('POST', '/files/signature', {
        token,
        form: { file: { name: 'scan.pdf', type: 'application/pdf', bytes: jpeg } },
      });
      assert.equal(declaredPdf.status, 200, 'the bytes decide, not the declared type');
      const after = await server.app.deps.db.selectFrom('files').select('id').execute();
      assert.equal(after.length, before.length + 1, 'no record for a refused upload');
    });

    it('a file above dropZoneMaxSize is refused with 413 LIMIT_EXCEEDED and leaves no record', async () => {
      await server.api('PUT', '/settings/properties', { token, body: { dropZoneMaxSize: 1 } });
      const big = Buffer.alloc(1024 * 1024 + 1, 7);
      const response = await server.api('POST', '/files/saveFile', {
        token,
        form: { file: { name: 'big.bin', type: 'application/octet-stream', bytes: big } },
      });
      assert.equal(response.status, 413);
      assert.equal(response.body.code, 'LIMIT_EXCEEDED');
      assert.equal(await filesNamed(server, 'big.bin'), 0);
      const exact = await server.api('POST', '/files/saveFile', {
        token,
        form: {
          file: { name: 'exact.bin', type: 'application/octet-stream', bytes: Buffer.alloc(1024 * 1024, 7) },
        },
      });
      assert.equal(exact.status, 200);
      await server.api('PUT', '/settings/properties', { token, body: { dropZoneMaxSize: 40 } });
    });

    it('the organization storage quota is enforced: 413 LIMIT_EXCEEDED once storage.limit would be passed', async () => {
      await server.api('PUT', '/settings/properties', { token, body: { storageLimitMb: 1 } });
      const first = await server.api('POST', '/files/saveFile', {
        token,
        form: {
          file: { name: 'q.bin', type: 'application/octet-stream', bytes: Buffer.alloc(900 * 1024, 1) },
        },
      });
      assert.equal(first.status, 413, 'earlier uploads already used most of the megabyte');
      assert.match(first.body.message, /quota/);
      await server.api('PUT', '/settings/properties', { token, body: { storageLimitMb: 10240 } });
    });
  });
}

describe('upload requests that are not right', () => {
  const server = useServer();

  it('no file, a file in another field, JSON instead of multipart: 4xx JSON errors', async () => {
    const token = await server.adminToken();
    const none = await server.api('POST', '/files/saveFile', { token, form: { fields: { fileName: 'x' } } });
    assert.equal(none.status, 400);
    assert.equal(none.body.message, 'Request validation errors: BODY ERRORS: "file" is required');
    const form = new FormData();
    form.append('attachment', new Blob([Buffer.from('x')]), 'x.txt');
    const wrongField = await fetch(`${server.url}/api/v1/files/saveFile?token=${token}`, {
      method: 'POST',
      body: form,
    });
    assert.equal(wrongField.status, 400);
    const json = await server.api('POST', '/files/saveFile', { token, body: { file: 'x' } });
    assert.equal(json.status, 415);
    assert.equal(json.body.code, 'UNSUPPORTED_MEDIA_TYPE');
    const anonymous = await server.api('POST', '/files/saveFile', {
      form: { file: { name: 'a.pdf', type: 'application/pdf', bytes: makePdf() } },
    });
    assert.equal(anonymous.status, 401);
  });
});
