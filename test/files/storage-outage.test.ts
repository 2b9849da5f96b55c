import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startS3rver, type RunningS3 } from '../helpers/s3rver.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const upload = (server: TestServer, token: string, text: string) =>
  server.api('POST', '/files/saveFile', {
    token,
    form: { file: { name: 'note.txt', type: 'text/plain', bytes: Buffer.from(text) } },
  });

describe('Storage: with S3 down, calls answer 503 with Retry-After and recover by themselves (Operations)', () => {
  let s3: RunningS3;
  let proxy: TcpProxy;
  let server: TestServer;
  let token: string;
  before(async () => {
    s3 = await startS3rver();
    const endpoint = new URL(s3.endpoint);
    proxy = await startTcpProxy({ host: endpoint.hostname, port: Number(endpoint.port) });
    server = await startServer({ env: { ...s3.env, S3_ENDPOINT: `http://127.0.0.1:${proxy.port}` } });
    token = await server.adminToken();
  });
  after(async () => {
    await server?.close();
    await proxy?.close();
    await s3?.close();
  });

  it('an upload or a download while the bucket cannot be reached is 503 UNAVAILABLE, never 500', async () => {
    const stored = await upload(server, token, 'stored before the outage');
    assert.equal(stored.status, 200, stored.text);
    proxy.refuse();
    try {
      const refused = await upload(server, token, 'sent during the outage');
      assert.equal(refused.status, 503, refused.text);
      assert.equal(refused.body.code, 'UNAVAILABLE');
      assert.ok(refused.headers.get('retry-after'));
      const download = await server.api('GET', `/files/loadFile/hash/${stored.body.file.id as string}`, {
        token,
      });
      assert.equal(download.status, 503, download.text);
      const ready = await server.api('GET', '//readyz');
      assert.equal(ready.status, 503);
      assert.equal(ready.body.blobs, 'unavailable');
    } finally {
      proxy.restore();
    }
    const again = await upload(server, token, 'sent after the outage');
    assert.equal(again.status, 200, again.text);
    const download = await server.api('GET', `/files/loadFile/hash/${stored.body.file.id as string}`, {
      token,
    });
    assert.equal(download.text, 'stored before the outage');
  });
});
