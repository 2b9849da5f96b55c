import { randomUUID } from 'node:crypto';
import {
  closeSync,
  constants,
  createWriteStream,
  fdatasync,
  fsync,
  read,
  mkdirSync,
  openSync,
  renameSync,
  write,
  writeSync,
} from 'node:fs';
import { promisify } from 'node:util';
import { access, link, mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import type { TransformCallback, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobNotFound, BlobTooLarge, RunningSha256, checkRange, isSha256 } from './blob-store.js';
import type { BlobStore, ByteRange, ExtendOptions, LocalFile, PutOptions, StoredBlob } from './blob-store.js';

// Bytes in memory up to this size are written into the page cache synchronously (tens of
// microseconds, where each trip through the thread pool costs a wake-up); their fsync, which waits for
// the disk, stays asynchronous. So do open, rename and mkdir: metadata calls of microseconds. A rename
// over a stored copy of the same bytes frees that copy's blocks, as long as it is large (50 ms for
// 200 MB on ext4): a blob above this size is renamed on the thread pool, not on the event loop.
const SYNC_WRITE_MAX_BYTES = 1024 * 1024;

// The temp file's write buffer: the request keeps being read and hashed while the thread pool writes
// what came before (with the default 16 KiB, reading waited for each write in turn).
const SINK_BUFFER_BYTES = 1024 * 1024;

// A streamed blob's bytes are sent to the disk every this many bytes while the rest still arrives,
// not all at its final fsync: with gigabytes of RAM the kernel would otherwise hold a 1 GB file's
// pages until then, and that fsync would write all of it after the stream, not during (issue 26).
const WRITEBACK_BYTES = 64 * 1024 * 1024;

export interface FsBlobStoreOptions {
  /** Directory holding the blobs; created on first use. */
  root: string;
  /** A streamed blob's bytes start for the disk every this many bytes (WRITEBACK_BYTES by default). */
  writebackBytes?: number;
}

// A blob extended in place (`putExtended`) is copied in chunks of this size, this many at a time: a read
// of the next ones overlaps the writes of the last ones, and the same memory serves the whole copy.
const EXTEND_CHUNK_BYTES = 1024 * 1024;
const EXTEND_BUFFERS = 4;

const fsyncAsync = promisify(fsync);
const readAsync = promisify(read);
const fdatasyncAsync = promisify(fdatasync);
const writeAsync = promisify(write);

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
  readonly #writebackBytes: number;
  /** Fan-out directories made or being made by this store (at most 65,536). */
  readonly #dirs = new Map<string, Promise<void>>();

  constructor(options: FsBlobStoreOptions) {
    this.#root = options.root;
    this.#tmp = join(options.root, 'tmp');
    this.#writebackBytes = options.writebackBytes ?? WRITEBACK_BYTES;
  }

  async put(source: Readable | Buffer, options: PutOptions = {}): Promise<StoredBlob> {
    const { maxBytes } = options;
    if (Buffer.isBuffer(source) && maxBytes !== undefined && source.length > maxBytes) {
      throw new BlobTooLarge(maxBytes);
    }
    const tmp = this.#createTmp();
    let published = false;
    try {
      let blob: StoredBlob;
      if (Buffer.isBuffer(source)) {
        const hash = new RunningSha256(options.prefixHash);
        hash.update(source);
        blob = hash.digest();
        // The key is known before writing, so the fan-out directory is made (durably) meanwhile.
        await Promise.all([writeDurably(tmp.fd, source), this.#ensureDir(blob.sha256)]);
      } else {
        blob = await streamDurably(source, tmp.fd, options, this.#writebackBytes);
        await this.#ensureDir(blob.sha256);
      }
      await this.#publish(tmp.path, blob);
      published = true;
      return blob;
    } finally {
      if (!published) await unlink(tmp.path).catch(() => undefined);
    }
  }

  async putExtended(
    base: string,
    appended: Promise<Uint8Array>,
    options: ExtendOptions = {},
  ): Promise<StoredBlob> {
    // Awaited once the base is copied; a failure before then must not count as unhandled.
    appended.catch(() => undefined);
    const source = options.baseFile ?? (await this.#open(base));
    const tmp = this.#createTmp();
    let published = false;
    try {
      const blob = await extendDurably(source.fd, appended, tmp.fd, options, this.#writebackBytes);
      await this.#ensureDir(blob.sha256);
      await this.#publish(tmp.path, blob);
      published = true;
      return blob;
    } finally {
      // A base file given is the caller's to close.
      if (source !== options.baseFile) await source.close();
      if (!published) await unlink(tmp.path).catch(() => undefined);
    }
  }

  async sweepTemporary(olderThan: Date): Promise<number> {
    let removed = 0;
    for (const name of await listDir(this.#tmp)) {
      const path = join(this.#tmp, name);
      const info = await stat(path).catch(() => undefined);
      if (!info || info.mtime >= olderThan) continue;
      // Gone meanwhile (its put finished or failed and cleaned up): nothing to count.
      if (
        await unlink(path).then(
          () => true,
          () => false,
        )
      )
        removed++;
    }
    return removed;
  }

  /** A new temp file, open for writing; tmp/ (and the root) are made when missing. */
  #createTmp(): { path: string; fd: number } {
    const path = this.#createTmpPath();
    try {
      return { path, fd: openSync(path, 'wx') };
    } catch (error) {
      if (!isNotFound(error)) throw error;
      mkdirSync(this.#tmp, { recursive: true });
      return { path, fd: openSync(path, 'wx') };
    }
  }

  /** A path under tmp/ no one else uses. */
  #createTmpPath(): string {
    return join(this.#tmp, randomUUID());
  }

  /**
   * Renames the durable temp file to its key and makes the rename durable. A blob already stored under
   * that key has the same bytes, so replacing it changes nothing a reader could see.
   */
  async #publish(tmpPath: string, { sha256, size }: StoredBlob): Promise<void> {
    const finalPath = this.#path(sha256);
    const move = async () => {
      if (size <= SYNC_WRITE_MAX_BYTES) renameSync(tmpPath, finalPath);
      else await rename(tmpPath, finalPath);
    };
    try {
      await move();
    } catch (error) {
      if (!isNotFound(error)) throw error;
      // The fan-out directory went away under us (removed by hand): make it again, once.
      this.#dirs.delete(dirname(finalPath));
      await this.#ensureDir(sha256);
      await move();
    }
    await fsyncDir(dirname(finalPath));
  }

  /**
   * Makes the key's fan-out directory exist durably, once per directory: each directory created is
   * recorded by an fsync of its parent (together: on a journalling filesystem they share one commit).
   * Later and concurrent callers wait for the same result, so none publishes a blob into a directory
   * whose own entry is not yet durable. A failure is forgotten, to be tried again.
   */
  #ensureDir(sha256: string): Promise<void> {
    const dir = dirname(this.#path(sha256));
    let made = this.#dirs.get(dir);
    if (!made) {
      made = (async () => {
        const firstCreated = mkdirSync(dir, { recursive: true });
        if (firstCreated === undefined) return;
        const parents = [dirname(dir)];
        if (firstCreated !== dir) parents.push(this.#root);
        await Promise.all(parents.map(fsyncDir));
      })();
      this.#dirs.set(dir, made);
      made.catch(() => this.#dirs.delete(dir));
    }
    return made;
  }

  async get(sha256: string, range?: ByteRange): Promise<Readable> {
    const handle = await this.#open(sha256);
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

  async read(sha256: string): Promise<Buffer> {
    const handle = await this.#open(sha256);
    try {
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  }

  async openFile(sha256: string): Promise<LocalFile> {
    const handle = await this.#open(sha256);
    try {
      const { size } = await handle.stat();
      return { fd: handle.fd, size, close: () => handle.close() };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /**
   * Opens a blob for reading. Opening (rather than stat then a read by path) pins the file: a
   * concurrent delete cannot turn into a read error once this has resolved.
   */
  async #open(sha256: string): Promise<FileHandle> {
    if (!isSha256(sha256)) throw new BlobNotFound(sha256);
    try {
      return await open(this.#path(sha256), 'r');
    } catch (error) {
      if (isNotFound(error)) throw new BlobNotFound(sha256);
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

  /**
   * Moves the blob aside first (an atomic rename), then looks at what was moved: written before
   * `olderThan`, it is removed; written since (a put published the same bytes just now), it goes back
   * unless a newer put has published them again meanwhile. No put is ever undone.
   */
  async deleteIfOlderThan(sha256: string, olderThan: Date): Promise<boolean> {
    if (!isSha256(sha256)) return false;
    const aside = this.#createTmpPath();
    await mkdir(this.#tmp, { recursive: true });
    try {
      await rename(this.#path(sha256), aside);
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
    const { mtime } = await stat(aside);
    if (mtime < olderThan) {
      await unlink(aside);
      return true;
    }
    await link(aside, this.#path(sha256)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    await unlink(aside);
    return false;
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
async function writeDurably(fd: number, bytes: Buffer): Promise<void> {
  try {
    if (bytes.length <= SYNC_WRITE_MAX_BYTES) {
      for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at);
    } else {
      for (let at = 0; at < bytes.length;) at += (await writeAsync(fd, bytes, at)).bytesWritten;
    }
    await fsyncAsync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Sends a file's bytes to the disk while more are written: every `every` bytes an fdatasync starts,
 * not waited for, one at a time. With gigabytes of RAM the kernel would otherwise keep a 1 GB blob's
 * pages until its final fsync, which would then write all of it after the copy instead of during.
 */
class Writeback {
  readonly #fd: number;
  readonly #every: number;
  #sent = 0;
  #running: Promise<void> | undefined;

  constructor(fd: number, every: number) {
    this.#fd = fd;
    this.#every = every;
  }

  /** `written` bytes are in the file (or on their way to it). */
  advance(written: number): void {
    if (this.#running !== undefined || written - this.#sent < this.#every) return;
    this.#sent = written;
    const started = fdatasyncAsync(this.#fd).then(() => {
      if (this.#running === started) this.#running = undefined;
    });
    this.#running = started;
    // Awaited by `settled`; a copy that fails first does not wait for it.
    started.catch(() => undefined);
  }

  /** The last writeback's end (its failure is the copy's), before the final fsync and close. */
  settled(): Promise<void> {
    return this.#running ?? Promise.resolve();
  }
}

/**
 * Streams `source` into the file, fsynced before it closes, hashing and counting on the way, the
 * bytes sent to the disk as they come (Writeback).
 */
async function streamDurably(
  source: Readable,
  fd: number,
  options: PutOptions,
  writebackBytes: number,
): Promise<StoredBlob> {
  const { maxBytes } = options;
  const hash = new RunningSha256(options.prefixHash);
  const writeback = new Writeback(fd, writebackBytes);
  const meter = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      if (maxBytes !== undefined && hash.size + chunk.length > maxBytes) {
        callback(new BlobTooLarge(maxBytes));
        return;
      }
      hash.update(chunk);
      writeback.advance(hash.size);
      callback(null, chunk);
    },
    flush(callback: TransformCallback) {
      writeback.settled().then(() => callback(), callback);
    },
  });
  // flush: fsynced before the stream closes the file, hence before a rename can publish it. pipeline
  // destroys the source too when anything fails, so an oversized upload stops being read.
  const sink = createWriteStream('', { fd, flush: true, highWaterMark: SINK_BUFFER_BYTES });
  await pipeline(source, meter, sink);
  return hash.digest();
}

/**
 * Copies the file `sourceFd` into `fd`, then `appended`, hashing and observing on the way, fsynced,
 * and closes `fd`. EXTEND_BUFFERS buffers serve the whole copy: each is read into again only once
 * its write has ended, while the others are read, hashed and written.
 */
async function extendDurably(
  sourceFd: number,
  appended: Promise<Uint8Array>,
  fd: number,
  options: ExtendOptions,
  writebackBytes: number,
): Promise<StoredBlob> {
  const { maxBytes, observe } = options;
  const hash = new RunningSha256(options.prefixHash);
  const writeback = new Writeback(fd, writebackBytes);
  const free = Array.from({ length: EXTEND_BUFFERS }, () => Buffer.allocUnsafeSlow(EXTEND_CHUNK_BYTES));
  const writing = new Set<Promise<void>>();
  // The chunk's bytes are hashed, observed, then written at `at`; its buffer is free again after.
  const take = async (chunk: Uint8Array, at: number, release?: () => void): Promise<void> => {
    if (maxBytes !== undefined && hash.size + chunk.length > maxBytes) throw new BlobTooLarge(maxBytes);
    hash.update(chunk);
    await observe?.(chunk);
    const written = writeAll(fd, chunk, at).finally(() => {
      writing.delete(written);
      release?.();
    });
    writing.add(written);
    // Awaited below (race, all, allSettled); a failure meanwhile must not count as unhandled.
    written.catch(() => undefined);
    writeback.advance(hash.size);
  };
  try {
    for (let at = 0; ;) {
      let buffer = free.pop();
      while (buffer === undefined) {
        await Promise.race(writing);
        buffer = free.pop();
      }
      const { bytesRead } = await readAsync(sourceFd, buffer, 0, buffer.length, at);
      if (bytesRead === 0) {
        free.push(buffer);
        await take(await appended, at);
        break;
      }
      const reused = buffer;
      await take(buffer.subarray(0, bytesRead), at, () => free.push(reused));
      at += bytesRead;
    }
    await Promise.all(writing);
    await writeback.settled();
    await fsyncAsync(fd);
  } finally {
    // No write may still use the descriptor (or the buffers) once it is closed.
    await Promise.allSettled(writing);
    closeSync(fd);
  }
  return hash.digest();
}

/** Writes all of `bytes` at `position`. */
async function writeAll(fd: number, bytes: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < bytes.length;) {
    done += (await writeAsync(fd, bytes, done, bytes.length - done, position + done)).bytesWritten;
  }
}

async function fsyncDir(path: string): Promise<void> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    // Windows cannot open a directory; its rename is durable without this step.
    if (process.platform === 'win32') return;
    throw error;
  }
  try {
    await fsyncAsync(fd);
  } finally {
    closeSync(fd);
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
