import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { startServer, upload } from '../helpers/server.js';
import { aUser } from '../helpers/people.js';

describe('graceful shutdown while a download is still being sent', () => {
  // A liveness check, not a speed target: the bug held close() for the 72 s keep-alive timeout.
  it('lets the download finish, then closes its kept-alive connection instead of waiting for the keep-alive timeout', async () => {
    const server = await startServer();
    const token = (await aUser(server, { name: 'dora' })).token;
    const id = await upload(server, token, Buffer.alloc(20 * 1024 * 1024, 7), {
      name: 'big.bin',
      type: 'application/octet-stream',
    });
    const response = await fetch(`${server.url}/api/v1/files/loadFile/hash/${id}?token=${token}`);
    const reader = response.body!.getReader();
    const first = await reader.read();
    assert.equal(first.done, false);
    // Close while the response is still being written on a kept-alive connection.
    const closing = server.close().then(() => 'closed' as const);
    let received = first.value!.byteLength;
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      received += chunk.value.byteLength;
    }
    assert.equal(received, 20 * 1024 * 1024, 'the request in flight finished');
    assert.equal(await Promise.race([closing, sleep(15_000).then(() => 'still open' as const)]), 'closed');
  });
});
