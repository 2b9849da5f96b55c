import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { makeStore, type TestStore } from '../helpers/server.js';
import { logIn, serverEnv, spawnServer, type ServerProcess } from '../webhooks/processes.js';

const MB = 1024 * 1024;
const BOUNDARY = 'crash-test-boundary';

/**
 * A saveFile upload streamed by hand: its multipart body goes out a megabyte at a time, and stops
 * after `sendBytes` unless that is all of it. Resolves with the answer's status, or undefined when
 * the server went away first.
 */
function streamUpload(
  url: string,
  token: string,
  fileBytes: number,
  sendBytes = fileBytes,
): { sent: Promise<void>; answered: Promise<number | undefined> } {
  let markSent!: () => void;
  const sent = new Promise<void>((resolve) => (markSent = resolve));
  const answered = new Promise<number | undefined>((resolve) => {
    const call = request(`${url}/api/v1/files/saveFile?token=${token}`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    });
    call.on('response', (response) => {
      response.resume();
      resolve(response.statusCode);
    });
    call.on('error', () => resolve(undefined));
    call.write(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    );
    let written = 0;
    const next = (): void => {
      if (written >= sendBytes) {
        markSent();
        if (sendBytes >= fileBytes) call.end(`\r\n--${BOUNDARY}--\r\n`);
        return;
      }
      const chunk = randomBytes(Math.min(MB, sendBytes - written));
      written += chunk.length;
      if (call.write(chunk)) setImmediate(next);
      else call.once('drain', next);
    };
    next();
  });
  return { sent, answered };
}

async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  // Files come and go while uploads run.
  for (const name of await readdir(dir).catch(() => [])) {
    total += (await stat(join(dir, name)).catch(() => ({ size: 0 }))).size;
  }
  return total;
}

describe('Operations: a node killed during uploads loses nothing acknowledged and leaves nothing for ever', () => {
  // Removed after the nodes that use it stop.
  let store: TestStore;
  let env: Record<string, string>;
  let node: ServerProcess | undefined;
  let survivor: TestServer | undefined;

  before(async () => {
    store = await makeStore('upload-crash');
    env = serverEnv(store.env);
  });
  after(async () => {
    await node?.stop('SIGKILL');
    await survivor?.close();
    await store?.remove();
  });

  it('SIGKILL during 30 MB uploads and a burst of small ones: every stored file has its audit record, and the sweeps remove the rest', async () => {
    node = await spawnServer(env);
    const token = await logIn(node.url);
    const tmp = join(store.dataDir, 'blobs', 'tmp');

    // Four 30 MB uploads that stop after 12 MB, as a client whose connection stalls would.
    const stalled = Array.from({ length: 4 }, () => streamUpload(node!.url, token, 30 * MB, 12 * MB));
    await Promise.all(stalled.map((upload) => upload.sent));
    // Small uploads finishing all the time, so that the kill lands between some body and its commit.
    let acknowledged = 0;
    let burst = true;
    const small = Array.from({ length: 4 }, async () => {
      while (burst) {
        const status = await streamUpload(node!.url, token, 200_000).answered;
        if (status === 200) acknowledged++;
        if (status === undefined) return;
      }
    });
    while ((await sizeOf(tmp)) < 40 * MB || acknowledged < 10) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await node.stop('SIGKILL');
    burst = false;
    await Promise.all(small);
    node = undefined;
    const left = await sizeOf(tmp);
    assert.ok(left >= 40 * MB, `the interrupted uploads left ${String(left)} bytes of temp files`);

    // The same store, opened again.
    survivor = await startServer({
      env: store.env,
    });
    const { db } = survivor.app.deps;
    const files = await db.selectFrom('files').select(['id', 'sha256', 'size']).execute();
    assert.ok(files.length >= acknowledged, 'every acknowledged upload is there');
    const audited = new Set(
      (
        await db
          .selectFrom('audit_log')
          .select('object_id')
          .where('activity_type', '=', 'fileUploaded')
          .execute()
      ).map((row) => row.object_id),
    );
    for (const file of files) assert.ok(audited.has(file.id), `file ${file.id} has its fileUploaded record`);
    assert.equal(audited.size, files.length, 'and no record names a file that is not there');
    for (const file of files) {
      const bytes = await survivor.app.blobs.read(file.sha256);
      assert.equal(bytes.length, file.size);
      assert.equal(createHash('sha256').update(bytes).digest('hex'), file.sha256);
    }

    // Young leftovers are kept (an upload may still be running); past the grace period they go.
    const now = Date.now();
    assert.equal(await survivor.app.blobs.sweepTemporary(new Date(now - 3_600_000)), 0);
    assert.equal(await survivor.app.deps.files.sweepUnreferenced(new Date(now - 3_600_000)), 0);
    assert.ok((await survivor.app.blobs.sweepTemporary(new Date(now + 60_000))) >= 4);
    assert.equal(await sizeOf(tmp), 0, 'no temp file left');
    await survivor.app.deps.files.sweepUnreferenced(new Date(now + 60_000));
    const blobs: string[] = [];
    for await (const key of survivor.app.blobs.list()) blobs.push(key);
    assert.deepEqual(
      blobs.sort(),
      [...new Set(files.map((file) => file.sha256))].sort(),
      'only referenced blobs',
    );

    // An unreferenced blob that is young stays: a change may be about to commit its row.
    const young = await survivor.app.blobs.put(randomBytes(1000));
    assert.equal(await survivor.app.deps.files.sweepUnreferenced(new Date(Date.now() - 3_600_000)), 0);
    assert.ok(await survivor.app.blobs.stat(young.sha256));
    // Every file still downloads through the API.
    const admin = await survivor.adminToken();
    for (const file of files.slice(0, 5)) {
      const answer = await fetch(`${survivor.url}/api/v1/files/loadFile/hash/${file.id}?token=${admin}`);
      assert.equal(answer.status, 200);
      assert.equal(
        createHash('sha256')
          .update(Buffer.from(await answer.arrayBuffer()))
          .digest('hex'),
        file.sha256,
      );
    }
  });
});
