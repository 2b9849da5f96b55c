import { createHash, randomUUID } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { access, mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import type { TransformCallback } from 'node:stream';
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

  constructor(options: FsBlobStoreOptions) {
    this.#root = options.root;
    this.#tmp = join(options.root, 'tmp');
  }

  async put(source: Readable | Buffer, options: PutOptions = {}): Promise<StoredBlob> {
    const { maxBytes } = options;
    if (Buffer.isBuffer(source) && maxBytes !== undefined && source.length > maxBytes) {
      throw new BlobTooLarge(maxBytes);
    }
    await mkdir(this.#tmp, { recursive: true });
    const tmpPath = join(this.#tmp, randomUUID());
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

    let published = false;
    try {
      // flush: the temp file is fsynced before it closes, hence before the rename can publish it.
      const sink = createWriteStream(tmpPath, { flags: 'wx', flush: true, highWaterMark: SINK_BUFFER_BYTES });
      // pipeline destroys the source too when anything fails, so an oversized upload stops being read.
      await pipeline(Buffer.isBuffer(source) ? Readable.from([source]) : source, meter, sink);

      const sha256 = hash.digest('hex');
      const finalPath = this.#path(sha256);
      const dir = dirname(finalPath);
      const created = await mkdir(dir, { recursive: true });
      if (created !== undefined) {
        // New fan-out directories are only durable once their own parents record them.
        await fsyncDir(dirname(dir));
        await fsyncDir(this.#root);
      }
      if (await exists(finalPath)) {
        await unlink(tmpPath);
      } else {
        await rename(tmpPath, finalPath);
        await fsyncDir(dir);
      }
      published = true;
      return { sha256, size };
    } finally {
      if (!published) await unlink(tmpPath).catch(() => undefined);
    }
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

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
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
