import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { BlobNotFound, BlobTooLarge } from '../../src/store/blobs/blob-store.js';
import type { BlobStore } from '../../src/store/blobs/blob-store.js';
import { FsBlobStore } from '../../src/store/blobs/fs.js';
import { S3BlobStore } from '../../src/store/blobs/s3.js';
import { startS3rver } from '../helpers/s3rver.js';

const MiB = 1024 * 1024;
const CHUNK = 64 * 1024;

interface Harness {
  store: BlobStore;
  /** Whatever an in-progress or failed put could have left behind in the backend. */
  leftovers(): Promise<string[]>;
  /** Leaves what a put interrupted by a crash leaves: a temp file, or a temp object and an unfinished multipart upload. */
  crashMidPut(): Promise<void>;
  teardown(): Promise<void>;
}

async function fsHarness(): Promise<Harness & { root: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'signery-blobs-'));
  // A root that does not exist yet: the store must create it on demand.
  const root = join(dir, 'blobs');
  const store = new FsBlobStore({ root });
  return {
    store,
    root,
    leftovers: async () => (await readdir(join(root, 'tmp')).catch(() => [])).map(String),
    crashMidPut: async () => {
      await mkdir(join(root, 'tmp'), { recursive: true });
      await writeFile(join(root, 'tmp', randomUUID()), 'half an upload');
    },
    teardown: async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function s3Harness(): Promise<Harness> {
  const server = await startS3rver();
  const connection = {
    region: server.region,
    endpoint: server.endpoint,
    forcePathStyle: true,
    accessKeyId: server.accessKeyId,
    secretAccessKey: server.secretAccessKey,
  };
  // A prefix without its slash, to check the store adds it.
  const store = new S3BlobStore({ ...connection, bucket: 'test-bucket', prefix: 'signery' });
  const inspector = new S3Client({
    region: connection.region,
    endpoint: connection.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  return {
    store,
    leftovers: async () => {
      const page = await inspector.send(
        new ListObjectsV2Command({ Bucket: 'test-bucket', Prefix: 'signery/tmp/' }),
      );
      return (page.Contents ?? []).map(({ Key }) => Key ?? '');
    },
    crashMidPut: async () => {
      await inspector.send(
        new PutObjectCommand({ Bucket: 'test-bucket', Key: `signery/tmp/${randomUUID()}`, Body: 'half' }),
      );
    },
    teardown: async () => {
      await store.close();
      inspector.destroy();
      await server.close();
    },
  };
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

async function sha256Of(stream: AsyncIterable<Buffer>): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { sha256: hash.digest('hex'), size };
}

async function readAll(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function listAll(store: BlobStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of store.list()) keys.push(key);
  return keys;
}

/**
 * `size` pseudo-random bytes in 64 KiB chunks from a seeded xorshift32, generated lazily so the test
 * never holds the whole payload; `digest` is complete once the stream has been consumed.
 */
function pseudoRandom(seed: number, size: number): { stream: Readable; digest: () => string } {
  const hash = createHash('sha256');
  let state = seed >>> 0 || 1;
  let remaining = size;
  const stream = new Readable({
    read() {
      if (remaining === 0) {
        this.push(null);
        return;
      }
      const words = new Uint32Array(CHUNK / 4);
      for (let i = 0; i < words.length; i++) {
        state ^= state << 13;
        state ^= state >>> 17;
        state ^= state << 5;
        words[i] = state >>> 0;
      }
      const chunk = Buffer.from(words.buffer, 0, Math.min(CHUNK, remaining));
      remaining -= chunk.length;
      hash.update(chunk);
      this.push(chunk);
    },
  });
  return { stream, digest: () => hash.digest('hex') };
}

/** A source that delivers `before` bytes and then fails, like a client dropping mid-upload. */
function failingSource(before: number): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= before) {
        this.destroy(new Error('client went away'));
        return;
      }
      const chunk = Buffer.alloc(Math.min(CHUNK, before - sent), sent % 251);
      sent += chunk.length;
      this.push(chunk);
    },
  });
}

for (const kind of ['fs', 's3'] as const) {
  describe(`${kind} blob store`, () => {
    let harness: Harness;
    let fsRoot: string | undefined;
    let store: BlobStore;

    before(async () => {
      if (kind === 'fs') {
        const fs = await fsHarness();
        fsRoot = fs.root;
        harness = fs;
      } else {
        harness = await s3Harness();
      }
      store = harness.store;
    });

    after(async () => {
      await harness.teardown();
    });

    it('ping resolves', async () => {
      await store.ping();
    });

    it('put returns the SHA-256 and size of the bytes', async () => {
      const bytes = Buffer.from('%PDF-1.7 put returns the digest');
      const stored = await store.put(bytes);
      assert.deepEqual(stored, { sha256: sha256(bytes), size: bytes.length });
      assert.deepEqual(await store.stat(stored.sha256), { size: bytes.length });
    });

    it('identical bytes put twice give one key and one stored blob', async () => {
      const bytes = Buffer.from('stored once, referenced twice');
      const first = await store.put(bytes);
      const second = await store.put(Readable.from([bytes.subarray(0, 5), bytes.subarray(5)]));
      assert.deepEqual(second, first);
      const keys = await listAll(store);
      assert.equal(keys.filter((key) => key === first.sha256).length, 1);
    });

    it('a Readable source of many chunks round-trips exactly (20 MiB)', async () => {
      const size = 20 * MiB + 12345;
      const source = pseudoRandom(42, size);
      const stored = await store.put(source.stream);
      const expected = source.digest();
      assert.deepEqual(stored, { sha256: expected, size });
      assert.deepEqual(await sha256Of(await store.get(stored.sha256)), { sha256: expected, size });
    });

    it('a Buffer source works', async () => {
      const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7) % 256));
      const stored = await store.put(bytes);
      assert.deepEqual(stored, { sha256: sha256(bytes), size: bytes.length });
      assert.deepEqual(await readAll(await store.get(stored.sha256)), bytes);
    });

    it('an empty source stores an empty blob', async () => {
      const stored = await store.put(Buffer.alloc(0));
      assert.deepEqual(stored, { sha256: sha256(Buffer.alloc(0)), size: 0 });
      assert.equal((await readAll(await store.get(stored.sha256))).length, 0);
    });

    it('exactly maxBytes is accepted', async () => {
      const bytes = Buffer.alloc(1000, 7);
      const stored = await store.put(Readable.from([bytes.subarray(0, 600), bytes.subarray(600)]), {
        maxBytes: 1000,
      });
      assert.equal(stored.size, 1000);
    });

    it('more than maxBytes rejects with BlobTooLarge and leaves no blob', async () => {
      // Past one 8 MiB part, so the S3 store has a multipart upload to abort.
      const source = pseudoRandom(7, 12 * MiB);
      await assert.rejects(store.put(source.stream, { maxBytes: 9 * MiB }), BlobTooLarge);
      assert.equal(source.stream.destroyed, true, 'the source is no longer read');
      assert.equal(await store.stat(source.digest()), undefined);

      const small = Buffer.from('eleven bytes');
      await assert.rejects(store.put(small, { maxBytes: 11 }), BlobTooLarge);
      assert.equal(await store.stat(sha256(small)), undefined);
      assert.ok(!(await listAll(store)).includes(sha256(small)));
      assert.deepEqual(await harness.leftovers(), []);
    });

    it('prefixHash hands over the running SHA-256 after exactly that many bytes, from a stream or a buffer (a seal hashes its byte ranges from the copy)', async () => {
      const bytes = Buffer.from(Array.from({ length: 3 * CHUNK + 500 }, (_, i) => (i * 13 + 7) % 256));
      const chunks = [bytes.subarray(0, CHUNK), bytes.subarray(CHUNK, 3 * CHUNK), bytes.subarray(3 * CHUNK)];
      // Inside a chunk, on a chunk boundary, the whole blob, nothing.
      for (const cut of [CHUNK + 1234, CHUNK, bytes.length, 0]) {
        for (const source of [() => Readable.from(chunks), () => Buffer.from(bytes)]) {
          const taken: string[] = [];
          const stored = await store.put(source(), {
            prefixHash: { bytes: cut, take: (state) => taken.push(state.digest('hex')) },
          });
          assert.deepEqual(taken, [sha256(bytes.subarray(0, cut))], `prefix of ${cut} bytes`);
          assert.equal(stored.sha256, sha256(bytes), 'the blob key is the whole digest still');
        }
      }
      // A prefix longer than the blob is never handed over.
      let called = false;
      await store.put(Readable.from(chunks), {
        prefixHash: { bytes: bytes.length + 1, take: () => (called = true) },
      });
      assert.equal(called, false);
    });

    it('putExtended stores a blob followed by bytes known later, observed in order, the prefix hash handed over at the base (a seal of a large file)', async () => {
      const base = Buffer.from(Array.from({ length: 2 * MiB + 333 }, (_, i) => (i * 7 + 1) % 256));
      const tail = Buffer.from('\n% the seal revision\n');
      const { sha256: baseKey } = await store.put(base);
      let release!: (bytes: Uint8Array) => void;
      const appended = new Promise<Uint8Array>((resolve) => (release = resolve));
      const observed: Buffer[] = [];
      let prefix: string | undefined;
      const stored = store.putExtended(baseKey, appended, {
        prefixHash: {
          bytes: base.length,
          take: (state) => {
            prefix = state.digest('hex');
            // The tail is known only once the base is hashed, as a signature's revision is.
            release(tail);
          },
        },
        // Copied, as the SHA-512 tap copies: the store may reuse a chunk's memory afterwards.
        observe: async (chunk) => {
          await new Promise((resolve) => setImmediate(resolve));
          observed.push(Buffer.from(chunk));
        },
      });
      const whole = Buffer.concat([base, tail]);
      assert.deepEqual(await stored, { sha256: sha256(whole), size: whole.length });
      assert.equal(prefix, sha256(base));
      assert.ok(Buffer.concat(observed).equals(whole), 'every byte observed, in order');
      assert.ok((await store.read(sha256(whole))).equals(whole));
      assert.deepEqual(await harness.leftovers(), []);
    });

    it('putExtended reads the base from the local file given (a seal already has it open): a remote store does not fetch it again', async () => {
      const base = Buffer.alloc(2 * MiB + 5, 'base at hand ');
      const { sha256: baseKey } = await store.put(base);
      const local = await store.openFile(baseKey);
      try {
        // Gone from the store: only the open file still holds the bytes.
        await store.delete(baseKey);
        const tail = Buffer.from('revision');
        const stored = await store.putExtended(baseKey, Promise.resolve(tail), { baseFile: local });
        const whole = Buffer.concat([base, tail]);
        assert.deepEqual(stored, { sha256: sha256(whole), size: whole.length });
        assert.ok((await store.read(stored.sha256)).equals(whole));
        // Still open: it is the caller's to close.
        assert.equal(readSync(local.fd, Buffer.alloc(4), 0, 4, 0), 4);
      } finally {
        await local.close();
      }
    });

    it('putExtended of an unknown base is BlobNotFound; a tail that fails, or too many bytes, leave nothing', async () => {
      await assert.rejects(
        store.putExtended('e'.repeat(64), Promise.resolve(Buffer.from('x'))),
        BlobNotFound,
      );
      const { sha256: baseKey } = await store.put(Buffer.alloc(3 * MiB, 5));
      const before = (await listAll(store)).sort();
      await assert.rejects(
        store.putExtended(baseKey, Promise.reject(new Error('the signature failed'))),
        /the signature failed/,
      );
      await assert.rejects(
        store.putExtended(baseKey, Promise.resolve(Buffer.alloc(10)), { maxBytes: 3 * MiB + 9 }),
        BlobTooLarge,
      );
      assert.deepEqual((await listAll(store)).sort(), before);
      assert.deepEqual(await harness.leftovers(), []);
    });

    it('a source stream that errors midway rejects and leaves nothing visible', async () => {
      const before = (await listAll(store)).sort();
      await assert.rejects(store.put(failingSource(300 * 1024)), /client went away/);
      assert.deepEqual((await listAll(store)).sort(), before);
      assert.deepEqual(await harness.leftovers(), []);
    });

    it('get with a range returns exactly bytes start..end inclusive', async () => {
      const bytes = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 31 + 3) % 256));
      const { sha256: key } = await store.put(bytes);
      const ranges: [number, number][] = [
        [1, 1],
        [0, 4999],
        [10, 19],
        [4096, 4999],
        [4999, 4999],
      ];
      // s3rver reads `bytes=0-0` as the whole object (it tests `end || Infinity`); real S3 does not.
      if (kind === 'fs') ranges.push([0, 0]);
      for (const [start, end] of ranges) {
        const got = await readAll(await store.get(key, { start, end }));
        assert.deepEqual(got, bytes.subarray(start, end + 1), `bytes ${start}-${end}`);
      }
      // Like HTTP, an end past the last byte is clamped.
      assert.deepEqual(await readAll(await store.get(key, { start: 4990, end: 9999 })), bytes.subarray(4990));
    });

    it('a range that covers no byte rejects with RangeError', async () => {
      const { sha256: key } = await store.put(Buffer.from('0123456789'));
      await assert.rejects(store.get(key, { start: 10, end: 20 }), RangeError);
      await assert.rejects(store.get(key, { start: 5, end: 4 }), RangeError);
      await assert.rejects(store.get(key, { start: -1, end: 4 }), RangeError);
    });

    it('get of an unknown key throws BlobNotFound; stat gives undefined', async () => {
      const unknown = sha256(Buffer.from('never stored'));
      await assert.rejects(store.get(unknown), (error: unknown) => {
        assert.ok(error instanceof BlobNotFound);
        assert.equal(error.sha256, unknown);
        return true;
      });
      await assert.rejects(store.get(unknown, { start: 0, end: 1 }), BlobNotFound);
      await assert.rejects(store.read(unknown), BlobNotFound);
      assert.equal(await store.stat(unknown), undefined);
    });

    it('read gives the whole blob in one buffer, as get streams it', async () => {
      const bytes = Buffer.alloc(3 * CHUNK + 17, 'read whole ');
      const { sha256: key } = await store.put(bytes);
      assert.deepEqual(await store.read(key), bytes);
      assert.deepEqual(await store.read((await store.put(Buffer.alloc(0))).sha256), Buffer.alloc(0));
    });

    it('openFile gives the blob through a local file descriptor, read at any offset until closed (a large PDF is signed from it)', async () => {
      const bytes = Buffer.alloc(3 * CHUNK + 17, 'open as a file ');
      const { sha256: key } = await store.put(bytes);
      const file = await store.openFile(key);
      try {
        assert.equal(file.size, bytes.length);
        const middle = Buffer.alloc(100);
        assert.equal(readSync(file.fd, middle, 0, 100, CHUNK + 5), 100);
        assert.deepEqual(middle, bytes.subarray(CHUNK + 5, CHUNK + 105));
        const last = Buffer.alloc(17);
        assert.equal(readSync(file.fd, last, 0, 17, 3 * CHUNK), 17);
        assert.deepEqual(last, bytes.subarray(3 * CHUNK));
      } finally {
        await file.close();
      }
      await assert.rejects(store.openFile('f'.repeat(64)), BlobNotFound);
    });

    it('a key that is not a SHA-256 (path traversal) is BlobNotFound', async () => {
      for (const key of ['../../etc/passwd', '../tmp', '', 'A'.repeat(64), `${'a'.repeat(64)}/..`]) {
        await assert.rejects(store.get(key), BlobNotFound, key);
        await assert.rejects(store.read(key), BlobNotFound, key);
        assert.equal(await store.stat(key), undefined, key);
        await store.delete(key);
      }
    });

    it('delete then get is BlobNotFound; deleting an unknown key resolves', async () => {
      const bytes = Buffer.from('to be deleted');
      const { sha256: key } = await store.put(bytes);
      await store.delete(key);
      await assert.rejects(store.get(key), BlobNotFound);
      assert.equal(await store.stat(key), undefined);
      assert.ok(!(await listAll(store)).includes(key));
      await store.delete(key);
      await store.delete(sha256(Buffer.from('never stored either')));
    });

    it('what a put interrupted by a crash left behind is swept once older than the grace period, and only then', async () => {
      await harness.crashMidPut();
      await harness.crashMidPut();
      assert.equal((await harness.leftovers()).length, 2);
      const kept = await store.put(Buffer.from('a finished put is not temporary'));
      // Younger than the grace period: a put that may still be running.
      assert.equal(await store.sweepTemporary(new Date(Date.now() - 3_600_000)), 0);
      assert.equal((await harness.leftovers()).length, 2);
      assert.equal(await store.sweepTemporary(new Date(Date.now() + 60_000)), 2);
      assert.deepEqual(await harness.leftovers(), []);
      assert.deepEqual(await store.stat(kept.sha256), { size: 31 });
    });

    it('deleteIfOlderThan removes a blob written before the cutoff and keeps one written since', async () => {
      const { sha256: key } = await store.put(Buffer.from(`aged ${kind}`));
      assert.equal(await store.deleteIfOlderThan(key, new Date(Date.now() - 3_600_000)), false, 'too young');
      assert.ok(await store.stat(key));
      assert.equal(await store.deleteIfOlderThan(key, new Date(Date.now() + 60_000)), true);
      assert.equal(await store.stat(key), undefined);
      assert.equal(await store.deleteIfOlderThan(key, new Date(Date.now() + 60_000)), false, 'gone already');
      assert.equal(await store.deleteIfOlderThan('../../etc/passwd', new Date(Date.now() + 60_000)), false);
    });

    it('a put of bytes already stored makes them young again: the sweep keeps what an upload reuses', async () => {
      const bytes = Buffer.from(`reused ${kind}`);
      const { sha256: key } = await store.put(bytes);
      // S3 keeps LastModified to the second, and file times come from a coarse clock: the cutoff lies
      // a second before the second put, and more than a second after the first.
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      const cutoff = new Date(Date.now() - 1_000);
      await store.put(bytes);
      assert.equal(await store.deleteIfOlderThan(key, cutoff), false);
      assert.deepEqual(await store.read(key), bytes);
      await store.delete(key);
    });

    if (kind === 'fs') {
      it('a put that publishes the same bytes while the sweep moves them aside is never undone', async () => {
        const bytes = Buffer.from('raced');
        const { sha256: key } = await store.put(bytes);
        const path = join(fsRoot!, key.slice(0, 2), key.slice(2, 4), key);
        const old = new Date(Date.now() - 7_200_000);
        await utimes(path, old, old);
        // The sweep decided on this blob; a put publishes the same bytes before it acts.
        await store.put(bytes);
        assert.equal(await store.deleteIfOlderThan(key, new Date(Date.now() - 3_600_000)), false);
        assert.deepEqual(await store.read(key), bytes);
        assert.deepEqual(await harness.leftovers(), [], 'nothing left aside');
        await store.delete(key);
      });

      it('the blob lives at its content-addressed path', async () => {
        const bytes = Buffer.from('content-addressed');
        const { sha256: key } = await store.put(bytes);
        assert.ok(fsRoot !== undefined);
        const path = join(fsRoot, key.slice(0, 2), key.slice(2, 4), key);
        assert.deepEqual(await readFile(path), bytes);
        assert.deepEqual(await harness.leftovers(), []);
      });

      it('a put after tmp/ and its fan-out directories were removed by hand makes them again', async () => {
        assert.ok(fsRoot !== undefined);
        const first = Buffer.from('made before the directories went away');
        const { sha256: key } = await store.put(first);
        await rm(join(fsRoot, 'tmp'), { recursive: true });
        await rm(join(fsRoot, key.slice(0, 2)), { recursive: true });
        // Same bytes (same fan-out directory) from memory, then from a stream.
        assert.equal((await store.put(first)).sha256, key);
        await rm(join(fsRoot, 'tmp'), { recursive: true });
        await rm(join(fsRoot, key.slice(0, 2)), { recursive: true });
        assert.equal((await store.put(Readable.from([first]))).sha256, key);
        assert.deepEqual(await readFile(join(fsRoot, key.slice(0, 2), key.slice(2, 4), key)), first);
        assert.deepEqual(await harness.leftovers(), []);
      });

      it('a large blob (over 1 MiB, renamed on the thread pool) put again replaces its copy, and lands after its fan-out directory was removed by hand', async () => {
        assert.ok(fsRoot !== undefined);
        const bytes = randomBytes(3 * MiB + 7);
        const { sha256: key } = await store.put(Readable.from([bytes.subarray(0, MiB), bytes.subarray(MiB)]));
        const path = join(fsRoot, key.slice(0, 2), key.slice(2, 4), key);
        const firstInode = (await stat(path)).ino;
        assert.deepEqual(await store.put(Readable.from([bytes])), { sha256: key, size: bytes.length });
        assert.notEqual((await stat(path)).ino, firstInode, 'the new copy replaced the old one');
        await rm(join(fsRoot, key.slice(0, 2)), { recursive: true });
        assert.equal((await store.put(bytes)).sha256, key);
        assert.deepEqual(await readFile(path), bytes);
        assert.deepEqual(await harness.leftovers(), []);
        await store.delete(key);
      });

      it('a stream longer than the writeback interval is sent to the disk on the way and stored byte for byte', async () => {
        assert.ok(fsRoot !== undefined);
        // Writebacks every 64 KiB: dozens of fdatasyncs overlap the writes, the last one settles
        // before the final fsync closes the file.
        const small = new FsBlobStore({ root: fsRoot, writebackBytes: CHUNK });
        const size = 5 * MiB + 999;
        const source = pseudoRandom(99, size);
        const stored = await small.put(source.stream);
        assert.deepEqual(stored, { sha256: source.digest(), size });
        assert.deepEqual(await sha256Of(await small.get(stored.sha256)), { sha256: stored.sha256, size });
        await assert.rejects(small.put(failingSource(400 * 1024)), /client went away/);
        assert.deepEqual(await harness.leftovers(), []);
      });

      it('putExtended past the writeback interval sends the copy to the disk on the way and stores it byte for byte', async () => {
        assert.ok(fsRoot !== undefined);
        const small = new FsBlobStore({ root: fsRoot, writebackBytes: CHUNK });
        const source = pseudoRandom(5, 6 * MiB + 77);
        const { sha256: baseKey } = await small.put(source.stream);
        const tail = Buffer.from('tail');
        const stored = await small.putExtended(baseKey, Promise.resolve(tail));
        const whole = Buffer.concat([await small.read(baseKey), tail]);
        assert.deepEqual(stored, { sha256: sha256(whole), size: whole.length });
        assert.ok((await small.read(stored.sha256)).equals(whole));
        assert.deepEqual(await harness.leftovers(), []);
      });

      it('concurrent puts into one new fan-out directory all land', async () => {
        // Distinct bytes whose keys share their first four hex digits are rare; instead the same bytes
        // put many times at once race on making one directory and on renaming onto one key.
        const bytes = Buffer.from('raced');
        const keys = await Promise.all(Array.from({ length: 20 }, () => store.put(Buffer.from(bytes))));
        assert.deepEqual(new Set(keys.map((k) => k.sha256)).size, 1);
        assert.deepEqual(await store.stat(keys[0]!.sha256), { size: bytes.length });
        assert.deepEqual(await harness.leftovers(), []);
      });
    }
  });
}
