import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';

/**
 * Where file bytes live. Content-addressed: a blob's key is the lowercase hex SHA-256 of its bytes,
 * so identical uploads share storage. Opaque file ids (what the API hands out) live in the database
 * above this layer; nothing here knows about them.
 *
 * Contract shared by every implementation (checked by test/store/blobs.test.ts):
 * - `put` streams the source (never buffering it whole), computes the digest on the way and makes the
 *   blob visible only once every byte is durable; a failed or aborted put leaves no visible blob.
 * - `put` of bytes already stored succeeds and returns the same key.
 * - `maxBytes`: more bytes than that aborts the put with BlobTooLarge.
 * - `prefixHash`: the put's running SHA-256 after that many bytes is handed over (RunningSha256).
 * - `get` of an unknown key throws BlobNotFound; `range` is inclusive on both ends, like HTTP.
 * - `read` gives the same bytes as `get` without a range, in one buffer.
 * - `openFile` gives the same bytes through a local file descriptor, read at any offset, until `close`.
 *
 * ```ts
 * const { sha256, size } = await blobs.put(request.file.stream, { maxBytes: 40 * 1024 * 1024 });
 * const stream = await blobs.get(sha256, { start: 0, end: 1023 });
 * ```
 */
export interface BlobStore {
  put(source: Readable | Buffer, options?: PutOptions): Promise<StoredBlob>;
  /**
   * A new blob: the bytes of the stored blob `base`, then `appended` once it resolves (a seal of a
   * large file: its revisions after the original, issue 26). Like `put`, with the base read where it
   * is stored, never held whole, and no memory allocated per chunk. `observe` sees every byte in
   * order; a chunk's memory is reused once its promise settles. BlobNotFound for an unknown `base`.
   */
  putExtended(base: string, appended: Promise<Uint8Array>, options?: ExtendOptions): Promise<StoredBlob>;
  get(sha256: string, range?: ByteRange): Promise<Readable>;
  /** The whole blob in memory, for bytes worked on whole (a PDF to sign); BlobNotFound like `get`. */
  read(sha256: string): Promise<Buffer>;
  /**
   * The blob as a local file open for reading at any offset (a large PDF is signed from it without
   * being read whole); `close` it when done. A store whose blobs are not local files copies the blob
   * to an unnamed temporary file first, streamed. BlobNotFound like `get`.
   */
  openFile(sha256: string): Promise<LocalFile>;
  /** Size of a stored blob, or undefined when there is none. */
  stat(sha256: string): Promise<{ size: number } | undefined>;
  /** Removes a blob; removing an unknown key is not an error. */
  delete(sha256: string): Promise<void>;
  /** Every stored key, for the sweep that removes blobs no row references. */
  list(): AsyncIterable<string>;
  /**
   * Removes a blob unless it was written at `olderThan` or later; answers whether it did. Every `put`
   * writes its blob anew (identical bytes too), so a blob an upload is about to reference looks
   * recent and stays: the sweep of unreferenced blobs checks references first, then calls this.
   */
  deleteIfOlderThan(sha256: string, olderThan: Date): Promise<boolean>;
  /**
   * Removes what puts interrupted by a crash left behind (temp files, temp objects, unfinished
   * multipart uploads) last written before `olderThan`; answers how many. A put in progress keeps
   * writing, so a grace period longer than any upload leaves it alone.
   */
  sweepTemporary(olderThan: Date): Promise<number>;
  /** Resolves when the store answers (readiness probe). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface PutOptions {
  maxBytes?: number;
  /**
   * Hands `take` a copy of the put's running SHA-256 once the first `bytes` bytes have gone through,
   * for a caller that needs the digest of that prefix too: a seal of a large file hashes its byte
   * ranges, which start with the whole original the put copies, without reading it a second time
   * (issue 26). Not called when the put fails or ends before.
   */
  prefixHash?: { bytes: number; take: (state: Hash) => void };
}

/**
 * A blob's SHA-256 and size as its bytes go by (every store's `put`), handing the state at
 * `prefixHash.bytes` to its caller on the way.
 *
 * ```ts
 * const hash = new RunningSha256(options.prefixHash);
 * for await (const chunk of source) hash.update(chunk);
 * const { sha256, size } = hash.digest();
 * ```
 */
export class RunningSha256 {
  readonly #hash = createHash('sha256');
  #size = 0;
  #prefix: PutOptions['prefixHash'];

  constructor(prefix?: PutOptions['prefixHash']) {
    this.#prefix = prefix;
    this.#handOver();
  }

  get size(): number {
    return this.#size;
  }

  update(chunk: Uint8Array): void {
    const cut = this.#prefix ? this.#prefix.bytes - this.#size : -1;
    if (cut >= 0 && cut < chunk.length) {
      this.#hash.update(chunk.subarray(0, cut));
      this.#size += cut;
      this.#handOver();
      chunk = chunk.subarray(cut);
    }
    this.#hash.update(chunk);
    this.#size += chunk.length;
    this.#handOver();
  }

  digest(): StoredBlob {
    return { sha256: this.#hash.digest('hex'), size: this.#size };
  }

  #handOver(): void {
    if (this.#prefix?.bytes !== this.#size) return;
    const { take } = this.#prefix;
    this.#prefix = undefined;
    take(this.#hash.copy());
  }
}

export interface ExtendOptions extends PutOptions {
  /** Sees each chunk of the new blob in order; resolves once done with its bytes. */
  observe?: (chunk: Uint8Array) => Promise<void> | void;
  /**
   * The base, already open as a local file (`openFile`, which a seal's signer reads): its bytes are read
   * from there, so a store whose blobs are remote does not fetch them a second time. The caller keeps
   * it open until the put has settled, and closes it.
   */
  baseFile?: LocalFile;
}

/**
 * `putExtended` through `put`, for a store that cannot read its blobs in place: the base streamed
 * from `baseFile` when given, else from `get`, each chunk observed on the way.
 *
 * ```ts
 * putExtended(base, appended, options) { return putExtendedByStream(this, base, appended, options); }
 * ```
 */
export async function putExtendedByStream(
  store: BlobStore,
  base: string,
  appended: Promise<Uint8Array>,
  options: ExtendOptions = {},
): Promise<StoredBlob> {
  const { observe, baseFile, ...putOptions } = options;
  // Awaited once the base is read; a failure before then must not count as unhandled.
  appended.catch(() => undefined);
  const stream = baseFile
    ? createReadStream('', { fd: baseFile.fd, start: 0, autoClose: false, highWaterMark: 1024 * 1024 })
    : await store.get(base);
  async function* chunks(): AsyncGenerator<Uint8Array> {
    for await (const chunk of stream as AsyncIterable<Uint8Array>) {
      await observe?.(chunk);
      yield chunk;
    }
    const tail = await appended;
    await observe?.(tail);
    yield tail;
  }
  return store.put(Readable.from(chunks(), { objectMode: false }), putOptions);
}

export interface StoredBlob {
  sha256: string;
  size: number;
}

/** A blob open as a local file (BlobStore.openFile). */
export interface LocalFile {
  fd: number;
  size: number;
  close(): Promise<void>;
}

export interface ByteRange {
  start: number;
  end: number;
}

export class BlobNotFound extends Error {
  override name = 'BlobNotFound';
  constructor(readonly sha256: string) {
    super(`blob ${sha256} not found`);
  }
}

export class BlobTooLarge extends Error {
  override name = 'BlobTooLarge';
  constructor(readonly maxBytes: number) {
    super(`more than ${maxBytes} bytes`);
  }
}

export function isSha256(key: string): boolean {
  return /^[0-9a-f]{64}$/.test(key);
}

/**
 * Checks a range against a blob's size and returns its last byte: an end past the blob is cut back to
 * its last byte, as HTTP does; anything else that cannot be served is a RangeError.
 */
export function checkRange(range: ByteRange, size: number): number {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw new RangeError(`invalid byte range ${start}-${end}`);
  }
  if (start >= size) throw new RangeError(`byte range ${start}-${end} is past the end (${size} bytes)`);
  return Math.min(end, size - 1);
}
