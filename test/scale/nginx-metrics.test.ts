import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../helpers/free-port.js';
import { callApi, startServer, type TestServer } from '../helpers/server.js';
import { NGINX_BINARY, startNginx, type Nginx } from './nginx.js';

describe(
  'deploy/nginx.conf keeps GET /metrics private (issue 41): the public gets the answer of a path that does not exist',
  { skip: NGINX_BINARY ? false : 'nginx is not installed (.ci/run installs Debian’s package)' },
  () => {
    let node: TestServer;
    let nginx: Nginx;

    before(async () => {
      node = await startServer();
      nginx = await startNginx({ upstreams: [new URL(node.url).host], port: await freePort() });
    });
    after(async () => {
      await nginx?.stop();
      await node?.close();
    });

    it('the node itself serves /metrics (to the monitoring system on its network)', async () => {
      const direct = await callApi(node.url, 'GET', '//metrics');
      assert.equal(direct.status, 200);
      assert.match(direct.text, /^# HELP /m);
    });

    it('through nginx, /metrics answers 404 as the node answers an unknown path, with no metric in it', async () => {
      const unknown = await callApi(node.url, 'GET', '//no-such-path');
      assert.equal(unknown.status, 404);
      // Spellings nginx normalizes to /metrics, and paths below it, sent as written (no URL parser).
      const paths = [
        '/metrics',
        '/metrics?format=text',
        '//metrics',
        '/%6Detrics',
        '/./metrics',
        '/metrics/',
        '/metrics/x',
      ];
      for (const path of paths) {
        for (const method of ['GET', 'HEAD']) {
          const response = await rawRequest(nginx.url, method, path);
          assert.equal(response.status, 404, `${method} ${path}: ${response.text}`);
          assert.equal(response.contentType?.split(';')[0], 'application/json', path);
          if (method === 'GET') assert.deepEqual(JSON.parse(response.text), unknown.body, path);
          assert.doesNotMatch(response.text, /# HELP|# TYPE/, path);
        }
      }
    });

    it('nginx still forwards the API (the rule is for /metrics only)', async () => {
      const ping = await callApi(nginx.url, 'GET', '//healthz');
      assert.equal(ping.status, 200, ping.text);
      const login = await callApi(nginx.url, 'POST', '/login', {
        body: { name: 'nobody@example.test', password: 'x' },
      });
      assert.equal(login.status, 401, login.text);
    });
  },
);

/** A request whose path is sent byte for byte (fetch and URL would normalize it first). */
function rawRequest(
  base: string,
  method: string,
  path: string,
): Promise<{ status: number; contentType: string | undefined; text: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const sent = request({ host: hostname, port, method, path }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          contentType: response.headers['content-type'],
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    sent.on('error', reject);
    sent.end();
  });
}
