import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { Readable } from 'node:stream';
import { buffer, text } from 'node:stream/consumers';
import type { BlobStore } from '../../src/store/blobs/blob-store.js';
import { FileStore } from '../../src/store/files/file-store.js';
import { filesNamed } from '../helpers/documents.js';
import { useServer } from '../helpers/use-server.js';

describe('DESIGN Storage: opaque file ids above content-addressed blobs', () => {
  const server = useServer();
  let files: FileStore;
  let tenantId: string;
  before(async () => {
    files = new FileStore(server.app.deps.db, server.app.blobs);
    const tenant = await server.app.deps.db.selectFrom('tenants').select('id').executeTakeFirstOrThrow();
    tenantId = tenant.id;
  });

  /** The real blob store, with its puts held until `release` and their progress logged. */
  function heldBlobs(log: string[], fail = false) {
    const blobs = server.app.blobs;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const store: BlobStore = {
      get: (key, range) => blobs.get(key, range),
      read: (key) => blobs.read(key),
      openFile: (key) => blobs.openFile(key),
      stat: (key) => blobs.stat(key),
      delete: (key) => blobs.delete(key),
      list: () => blobs.list(),
      deleteIfOlderThan: (key, olderThan) => blobs.deleteIfOlderThan(key, olderThan),
      sweepTemporary: (olderThan) => blobs.sweepTemporary(olderThan),
      ping: () => blobs.ping(),
      close: () => blobs.close(),
      putExtended: (base, appended, options) => blobs.putExtended(base, appended, options),
      put: async (source, options) => {
        log.push('put started');
        await released;
        if (fail) throw new Error('disk full');
        const stored = await blobs.put(source, options);
        log.push('blob durable');
        return stored;
      },
    };
    return { files: new FileStore(server.app.deps.db, store), release };
  }

  it('each upload gets a new random id, never the content hash; identical bytes are stored once', async () => {
    const meta = { tenantId, ownerId: null, name: 'a.txt', mimetype: 'text/plain', kind: 'saveFile' };
    const first = await files.save(Buffer.from('same bytes'), meta);
    const second = await files.save(Buffer.from('same bytes'), meta);
    assert.notEqual(first.id, second.id);
    assert.equal(first.sha256, second.sha256);
    assert.notEqual(first.id, first.sha256);
    assert.match(first.id, /^[0-9a-f]{32}$/);
    const keys: string[] = [];
    for await (const key of server.app.blobs.list()) keys.push(key);
    assert.deepEqual(keys, [first.sha256]);
    const found = await files.find(tenantId, second.id);
    assert.ok(found);
    assert.equal(await text(await files.open(found)), 'same bytes');
    assert.equal(await files.find('another-tenant', second.id), undefined);
  });

  it('blob first, then the row: a put that fails writes no row', async () => {
    const meta = {
      tenantId,
      ownerId: null,
      name: 'big.bin',
      mimetype: 'application/octet-stream',
      kind: 'saveFile',
    };
    await assert.rejects(files.save(Buffer.alloc(100), { ...meta, maxBytes: 10 }), { name: 'BlobTooLarge' });
    assert.equal(await filesNamed(server, 'big.bin'), 0);
  });

  describe('saveWith: bytes saved inside a transaction while the rest of it runs', () => {
    const meta = (name: string) => ({
      tenantId,
      ownerId: null,
      name,
      mimetype: 'text/plain',
      kind: 'signed',
    });

    it('the rest of the transaction runs before the blob is durable; the row commits after it', async () => {
      const log: string[] = [];
      const { files: held, release } = heldBlobs(log);
      const bytes = Buffer.from('saved alongside the transaction');
      const now = new Date('2026-11-23T12:00:00.000Z');
      const next = { ...meta('alongside.txt'), usedBy: 'document:d1', pages: 3 };
      const record = await server.app.deps.db.transaction().execute(async (trx) => {
        const saved = await held.saveWith(trx, bytes, next, now, async (file) => {
          log.push('rest of the transaction');
          assert.equal(await server.app.blobs.stat(file.sha256), undefined, 'not stored yet');
          release();
          return file;
        });
        log.push('saveWith returned');
        return saved;
      });
      assert.deepEqual(log, ['put started', 'rest of the transaction', 'blob durable', 'saveWith returned']);
      const found = await files.find(tenantId, record.id);
      assert.deepEqual(found, record, 'the row as returned');
      // Contract File record: SHA-512 checksum of the bytes; content-addressed by SHA-256.
      assert.equal(found.sha256, createHash('sha256').update(bytes).digest('hex'));
      assert.equal(found.checksum, createHash('sha512').update(bytes).digest('hex'));
      assert.equal(found.size, bytes.length);
      assert.equal(found.used_by, 'document:d1');
      assert.equal(found.used_at, now.toISOString());
      assert.equal(found.pages, 3);
      assert.equal(await text(await files.open(found)), 'saved alongside the transaction');
    });

    it('a blob that cannot be stored fails the transaction: no row', async () => {
      const log: string[] = [];
      const { files: held, release } = heldBlobs(log, true);
      await assert.rejects(
        server.app.deps.db.transaction().execute((trx) =>
          held.saveWith(trx, Buffer.from('never stored'), meta('unstored.txt'), new Date(), async () => {
            release();
            return undefined;
          }),
        ),
        /disk full/,
      );
      assert.equal(await filesNamed(server, 'unstored.txt'), 0);
    });
  });

  describe('streamed bytes: the SHA-512 on a worker thread while the blob store writes', () => {
    const MiB = 1024 * 1024;

    it('the checksum is the SHA-512 of the bytes and the key their SHA-256, whatever the size and the chunks', async () => {
      // Around the 512 KiB slots the bytes are copied into for the worker, in chunks that straddle them.
      for (const size of [0, 1, 512 * 1024 - 1, 512 * 1024, 512 * 1024 + 1, 5 * MiB + 7]) {
        const source = counted(size);
        const stored = await files.storeBytes(source.stream);
        const bytes = pattern(0, size);
        assert.equal(
          stored.checksum,
          createHash('sha512').update(bytes).digest('hex'),
          `SHA-512, ${size} bytes`,
        );
        assert.equal(
          stored.sha256,
          createHash('sha256').update(bytes).digest('hex'),
          `SHA-256, ${size} bytes`,
        );
        assert.equal(stored.size, size);
        assert.deepEqual(await buffer(await files.open(stored)), bytes, `the stored bytes, ${size}`);
      }
    });

    it('a blob store that stops reading holds the source back: the upload is not buffered in memory', async () => {
      const { files: held, release } = heldBlobs([]);
      const source = counted(64 * MiB);
      const storing = held.storeBytes(source.stream);
      await settled(() => source.produced());
      assert.ok(
        source.produced() <= 4 * MiB,
        `${source.produced()} bytes read ahead of a store that reads none`,
      );
      release();
      const stored = await storing;
      assert.equal(stored.size, 64 * MiB);
      assert.equal(
        stored.checksum,
        createHash('sha512')
          .update(pattern(0, 64 * MiB))
          .digest('hex'),
      );
    });

    it('a source that fails midway leaves no blob and no temporary file, and the next upload is hashed as ever', async () => {
      const source = counted(8 * MiB, 3 * MiB);
      await assert.rejects(files.storeBytes(source.stream), /client went away/);
      assert.equal(
        await server.app.blobs.stat(
          createHash('sha256')
            .update(pattern(0, 8 * MiB))
            .digest('hex'),
        ),
        undefined,
      );
      assert.equal(
        await server.app.blobs.sweepTemporary(new Date(Date.now() + 60_000)),
        0,
        'no temporary file',
      );
      const next = await files.storeBytes(counted(2 * MiB).stream);
      assert.equal(
        next.checksum,
        createHash('sha512')
          .update(pattern(0, 2 * MiB))
          .digest('hex'),
      );
    });

    /** `size` bytes of a fixed pattern from `start`, as `counted` sends them. */
    function pattern(start: number, size: number): Buffer {
      const bytes = Buffer.alloc(size);
      for (let i = 0; i < size; i++) bytes[i] = ((start + i) * 131 + ((start + i) >> 12)) & 0xff;
      return bytes;
    }

    /**
     * A source of `size` pattern bytes in chunks of 65,537 (straddling every slot boundary), read on
     * demand and counted; with `failAt`, it fails there like a client dropping mid-upload.
     */
    function counted(size: number, failAt = Infinity): { stream: Readable; produced(): number } {
      const CHUNK = 65_537;
      let sent = 0;
      const stream = new Readable({
        read() {
          if (sent >= failAt) return void this.destroy(new Error('client went away'));
          if (sent >= size) return void this.push(null);
          const chunk = pattern(sent, Math.min(CHUNK, size - sent));
          sent += chunk.length;
          this.push(chunk);
        },
      });
      return { stream, produced: () => sent };
    }

    /** Resolves once `value` has stayed the same for 20 turns of the event loop, 10 ms apart. */
    async function settled(value: () => number): Promise<void> {
      for (let last = -1, same = 0; same < 20;) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        same = value() === last ? same + 1 : 0;
        last = value();
      }
    }
  });
});
