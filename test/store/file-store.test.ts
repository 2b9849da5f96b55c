import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { text } from 'node:stream/consumers';
import { FileStore } from '../../src/store/files/file-store.js';
import { startServer, type TestServer } from '../helpers/server.js';

describe('DESIGN Storage: opaque file ids above content-addressed blobs', () => {
  let server: TestServer;
  let files: FileStore;
  let tenantId: string;
  before(async () => {
    server = await startServer();
    files = new FileStore(server.app.deps.db, server.app.blobs);
    const tenant = await server.app.deps.db.selectFrom('tenants').select('id').executeTakeFirstOrThrow();
    tenantId = tenant.id;
  });
  after(() => server.close());

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
});
