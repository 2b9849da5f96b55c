import { createHash, randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import type { TransformCallback, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobNotFound, BlobTooLarge, checkRange, isSha256 } from './blob-store.js';
import type { BlobStore, ByteRange, PutOptions, StoredBlob } from './blob-store.js';

// The temp file's write buffer: the request keeps being read and hashed while the thread pool writes
// what came before (with the default 16 KiB, reading waited for each write in turn).
const SINK_BUFFER_BYTES = 1024 * 1024;

export interface FsBlobStoreOptions {
  /** Directory holding the blobs; created on first use. */
  root: string;
}

const FANOUT_DIR = /^[0-9a-f]{2}$/;

/**
 * Blob store on a local filesystem, laid out as `<root>/ab/cd/abcd…` (two levels of fan-out keep
 * directories small) with in-progress uploads in `<root>/tmp/`. A blob appears by atomic rename
 * only after its bytes and directory entry are fsynced, so a crash never leaves a partial blob
 * under a real key.
 *
 * ```ts
 * const blobs = new FsBlobStore({ root: join(config.dataDir, 'blobs') });
 * const { sha256, size } = await blobs.put(stream, { maxBytes: 40 * 1024 * 1024 });
 * ```
 */
export class FsBlobStore implements BlobStore {
  readonly #root: string;
  readonly #tmp: string;
  /** Directories made or being made by this store: tmp/ and at most 65,536 fan-out directories. */
  readonly #dirs = new Map<string, Promise<void>>();

  constructor(options: FsBlobStoreOptions) {
    this.#root = options.root;
    this.#tmp = join(options.root, 'tmp');
  }

  async put(source: Readable | Buffer, options: PutOptions = {}): Promise<StoredBlob> {
    const { maxBytes } = options;
    if (Buffer.isBuffer(source) && maxBytes !== undefined && source.length > maxBytes) {
      throw new BlobTooLarge(maxBytes);
    }
    const { path: tmpPath, handle } = await this.#createTmp();
    let published = false;
    try {
      let sha256: string;
      let size: number;
      if (Buffer.isBuffer(source)) {
        // Bytes in memory: the key is known before writing, so the fan-out directory is made (and made
        // durable) while the temp file is written, instead of after it.
        sha256 = createHash('sha256').update(source).digest('hex');
        size = source.length;
        await Promise.all([writeDurably(handle, source), this.#ensureDir(sha256)]);
      } else {
        ({ sha256, size } = await streamDurably(source, handle, maxBytes));
        await this.#ensureDir(sha256);
      }
      await this.#publish(tmpPath, sha256);
      published = true;
      return { sha256, size };
    } finally {
      if (!published) await unlink(tmpPath).catch(() => undefined);
    }
  }

  /** A new temp file, open for writing; tmp/ is made again if it was removed by hand. */
  async #createTmp(): Promise<{ path: string; handle: FileHandle }> {
    const path = join(this.#tmp, randomUUID());
    await this.#ensureTmp();
    try {
      return { path, handle: await open(path, 'wx') };
    } catch (error) {
      if (!isNotFound(error)) throw error;
      this.#dirs.delete(this.#tmp);
      await this.#ensureTmp();
      return { path, handle: await open(path, 'wx') };
    }
  }

  /**
   * Renames the durable temp file to its key and makes the rename durable. A blob already stored under
   * that key has the same bytes, so replacing it changes nothing a reader could see.
   */
  async #publish(tmpPath: string, sha256: string): Promise<void> {
    const finalPath = this.#path(sha256);
    try {
      await rename(tmpPath, finalPath);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      // The fan-out directory went away under us (removed by hand): make it again, once.
      this.#dirs.delete(dirname(finalPath));
      await this.#ensureDir(sha256);
      await rename(tmpPath, finalPath);
    }
    await fsyncDir(dirname(finalPath));
  }

  #ensureTmp(): Promise<void> {
    return this.#ensure(this.#tmp, async () => {
      await mkdir(this.#tmp, { recursive: true });
    });
  }

  /**
   * Makes the key's fan-out directory exist durably: each directory created is recorded by an fsync of
   * its parent (together: on a journalling filesystem they share one commit). Most puts find it made.
   */
  #ensureDir(sha256: string): Promise<void> {
    const dir = dirname(this.#path(sha256));
    return this.#ensure(dir, async () => {
      const firstCreated = await mkdir(dir, { recursive: true });
      if (firstCreated === undefined) return;
      const parents = [dirname(dir)];
      if (firstCreated !== dir) parents.push(this.#root);
      await Promise.all(parents.map(fsyncDir));
    });
  }

  /**
   * Runs `make` once per directory: later and concurrent callers wait for the same durable result, so
   * none publishes a blob into a directory whose own entry is not yet durable. A failure is forgotten.
   */
  #ensure(dir: string, make: () => Promise<void>): Promise<void> {
    let made = this.#dirs.get(dir);
    if (!made) {
      made = make();
      this.#dirs.set(dir, made);
      made.catch(() => this.#dirs.delete(dir));
    }
    return made;
  }

  async get(sha256: string, range?: ByteRange): Promise<Readable> {
    if (!isSha256(sha256)) throw new BlobNotFound(sha256);
    let handle: FileHandle;
    try {
      // Opening (rather than stat then createReadStream by path) pins the file: a concurrent delete
      // cannot turn into a stream error after this promise has resolved.
      handle = await open(this.#path(sha256), 'r');
    } catch (error) {
      if (isNotFound(error)) throw new BlobNotFound(sha256);
      throw error;
    }
    try {
      if (range === undefined) return handle.createReadStream();
      const { size } = await handle.stat();
      const end = checkRange(range, size);
      return handle.createReadStream({ start: range.start, end });
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async stat(sha256: string): Promise<{ size: number } | undefined> {
    // An invalid key names no blob, so it gets the same answer as an unknown one.
    if (!isSha256(sha256)) return undefined;
    try {
      const { size } = await stat(this.#path(sha256));
      return { size };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async delete(sha256: string): Promise<void> {
    if (!isSha256(sha256)) return;
    try {
      await unlink(this.#path(sha256));
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  async *list(): AsyncIterable<string> {
    for (const first of await listDir(this.#root)) {
      if (!FANOUT_DIR.test(first)) continue;
      for (const second of await listDir(join(this.#root, first))) {
        if (!FANOUT_DIR.test(second)) continue;
        for (const name of await listDir(join(this.#root, first, second))) {
          if (isSha256(name) && name.startsWith(first + second)) yield name;
        }
      }
    }
  }

  async ping(): Promise<void> {
    await mkdir(this.#root, { recursive: true });
    await access(this.#root, constants.R_OK | constants.W_OK);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** Only ever called with a validated key, so the result cannot leave the root. */
  #path(sha256: string): string {
    return join(this.#root, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  }
}

/** Writes all of `bytes` and fsyncs them, then closes the file. */
async function writeDurably(handle: FileHandle, bytes: Buffer): Promise<void> {
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Streams `source` into the file, fsynced before it closes, hashing and counting on the way. */
async function streamDurably(
  source: Readable,
  handle: FileHandle,
  maxBytes: number | undefined,
): Promise<StoredBlob> {
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      size += chunk.length;
      if (maxBytes !== undefined && size > maxBytes) {
        callback(new BlobTooLarge(maxBytes));
        return;
      }
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  // flush: fsynced before the stream closes the file, hence before a rename can publish it. pipeline
  // destroys the source too when anything fails, so an oversized upload stops being read.
  await pipeline(source, meter, handle.createWriteStream({ flush: true, highWaterMark: SINK_BUFFER_BYTES }));
  return { sha256: hash.digest('hex'), size };
}

async function fsyncDir(path: string): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    // Windows cannot open a directory; its rename is durable without this step.
    if (process.platform === 'win32') return;
    throw error;
  }
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Entries of a directory; none when it does not exist (yet, or any more: a sweep may race a delete). */
async function listDir(path: string): Promise<string[]> {
  try {
    return (await readdir(path)).sort();
  } catch (error) {
    if (isNotFound(error) || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw error;
  }
}

function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
