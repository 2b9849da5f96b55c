import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { useServer } from '../helpers/use-server.js';
import { createWebhook, emit, scopeOf, waitFor } from './helpers.js';

/** What the receiver answers to the delivery of each document: status and body bytes. */
const ANSWERS: Record<string, { status: number; body: Buffer }> = {
  // 3 + 1 invalid byte + NUL + 200 two-byte characters: byte 256 cuts the 126th "é" in two.
  mixed: {
    status: 200,
    body: Buffer.concat([Buffer.from('ok:'), Buffer.from([0xff, 0x00]), Buffer.from('é'.repeat(200))]),
  },
  // Past the 64 KiB that are read at all: the connection is cut, the start is kept.
  huge: { status: 200, body: Buffer.from('a'.repeat(100_000)) },
  refused: { status: 422, body: Buffer.from('{"error":"unknown document"}') },
};

// Issue 27, item 3: the delivery log keeps the first 256 bytes of each answer, as text.
describe('the delivery log keeps an excerpt of each response body (responseExcerpt)', () => {
  const server = useServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  let admin: string;
  let receiver: Server;
  let url: string;
  before(async () => {
    admin = await server.adminToken();
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const { documentId } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { documentId: string };
        const answer = ANSWERS[documentId] ?? { status: 200, body: Buffer.alloc(0) };
        response.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body);
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });
  after(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  });

  it('the first 256 bytes as UTF-8 text, invalid bytes and NUL replaced, a cut character left out', async () => {
    const hook = await createWebhook(server, admin, { type: 'tenant', callbackUrl: url });
    const scope = await scopeOf(server, 'admin@example.test');
    // The failing one last: its retries would hold the others back in the lane.
    for (const doc of ['mixed', 'huge', 'empty', 'refused'])
      await emit(server, scope, 'documentCreated', doc);
    const attemptOf = async (doc: string) => {
      const list = await server.api('GET', `/webhooks/${hook.id}/deliveries`, { token: admin });
      return list.body.results.find((d: { documentId: string }) => d.documentId === doc)?.attempts[0];
    };
    await waitFor(async () => (await attemptOf('refused')) !== undefined, 10_000, 'the four attempts');

    const mixed = await attemptOf('mixed');
    assert.equal(mixed.responseExcerpt, `ok:\uFFFD\uFFFD${'é'.repeat(125)}`);
    assert.equal(mixed.success, true);
    const huge = await attemptOf('huge');
    assert.equal(huge.responseExcerpt, 'a'.repeat(256));
    assert.equal(huge.statusCode, 200);
    assert.equal((await attemptOf('empty')).responseExcerpt, '');
    const refused = await attemptOf('refused');
    assert.equal(refused.responseExcerpt, '{"error":"unknown document"}');
    assert.equal(refused.success, false);
    assert.equal(refused.statusCode, 422);
  });
});
