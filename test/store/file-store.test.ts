import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { text } from 'node:stream/consumers';
import type { BlobStore } from '../../src/store/blobs/blob-store.js';
import { FileStore } from '../../src/store/files/file-store.js';
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
    const rows = await server.app.deps.db
      .selectFrom('files')
      .select('id')
      .where('name', '=', 'big.bin')
      .execute();
    assert.equal(rows.length, 0);
  });

  describe('saveWith: bytes saved inside a transaction while the rest of it runs', () => {
    const meta = (name: string) => ({
      tenantId,
      ownerId: null,
      name,
      mimetype: 'text/plain',
      kind: 'signed',
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
      const rows = await server.app.deps.db
        .selectFrom('files')
        .select('id')
        .where('name', '=', 'unstored.txt')
        .execute();
      assert.equal(rows.length, 0);
    });
  });
});
