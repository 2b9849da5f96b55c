import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../../base/worker-module.js';

/** What the main thread asks of the SHA-512 worker (sha512-worker.ts), per stream `id`. */
export type DigestRequest =
  | { type: 'open'; id: number; ring: SharedArrayBuffer; slotBytes: number }
  | { type: 'update'; id: number; slot: number; length: number }
  | { type: 'end'; id: number }
  | { type: 'drop'; id: number };

/** What the worker answers: a slot hashed (free to fill again), or a stream's digest. */
export type DigestAnswer =
  { type: 'free'; id: number; slot: number } | { type: 'digest'; id: number; hex: string };

// One copy per byte into the ring costs a few percent of the hash; slots of 512 KiB keep the worker's
// messages to two per slot, and four of them let the worker hash one while the stream fills the next
// ones. An upload holds these 2 MiB, whatever its size.
const SLOT_BYTES = 512 * 1024;
const SLOTS = 4;

/**
 * The SHA-512 of the bytes flowing through, computed on a worker thread while they flow on
 * unchanged (to the blob store, which writes them and computes their SHA-256 meanwhile). SHA-512
 * has no instructions of its own on common x86 CPUs (400–1,200 MB/s, against SHA-256's 1.5–2 GB/s
 * with SHA-NI): on the request's thread it was the slowest step of an upload.
 *
 * The bytes are copied into a ring of slots in memory shared with the worker: a chunk passes on
 * once it is copied, and when every slot waits for the worker the next chunk waits too, so a slow
 * hash holds the upload back (through the stream's backpressure) instead of buffering it. A stream
 * that never fills a slot is hashed here at its end, without a trip to the worker.
 *
 * ```ts
 * const tap = new Sha512Tap();
 * const blob = await blobs.put(source.pipe(tap));
 * const checksum = await tap.digest();
 * ```
 */
export class Sha512Tap extends Transform {
  #ring: Uint8Array | undefined;
  readonly #free = Array.from({ length: SLOTS }, (_, slot) => SLOTS - 1 - slot);
  /** The slot being filled, and how many bytes it holds. */
  #slot: number | undefined;
  #filled = 0;
  /** The stream's id at the worker, once a slot went there. */
  #id: number | undefined;
  #ended = false;
  /** The chunk waiting for a free slot: resumed when the worker frees one, failed when it is lost. */
  #blocked: ((error?: Error) => void) | undefined;
  readonly #digest: Promise<string>;
  #settle!: { resolve(hex: string): void; reject(error: Error): void };

  constructor() {
    super();
    this.#digest = new Promise<string>((resolve, reject) => (this.#settle = { resolve, reject }));
    // Read only once the blob is stored: a stream that fails before must not count as unhandled.
    this.#digest.catch(() => undefined);
  }

  /** The hex SHA-512 of every byte that went through, once the stream has ended. */
  digest(): Promise<string> {
    return this.#digest;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#copy(chunk, 0, (error) => callback(error ?? null, chunk));
  }

  override _flush(callback: TransformCallback): void {
    this.finish();
    callback();
  }

  /**
   * Hashes `chunk` outside a pipeline (a copy that reuses its buffers, FileStore.storeExtended):
   * resolves once its bytes are copied, so its memory may be written again. `finish` after the last.
   */
  update(chunk: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) =>
      this.#copy(chunk, 0, (error) => (error ? reject(error) : resolve())),
    );
  }

  /** No more bytes: the digest follows (`digest`). */
  finish(): void {
    this.#ended = true;
    if (this.#id === undefined) {
      this.#settle.resolve(
        createHash('sha512')
          .update(this.#ring?.subarray(0, this.#filled) ?? new Uint8Array())
          .digest('hex'),
      );
    } else {
      if (this.#slot !== undefined) this.#send();
      thread.post({ type: 'end', id: this.#id });
    }
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // Destroyed after its end (as every stream is once done), the worker is still hashing its last slots.
    if (!this.#ended) {
      if (this.#id !== undefined) thread.drop(this.#id);
      this.#fail(error ?? new Error('The stream was destroyed before its end'));
    }
    callback(error);
  }

  /** Copies `chunk` from `at` into slots, sending each full one; `done` once all of it is copied. */
  #copy(chunk: Uint8Array, at: number, done: (error?: Error) => void): void {
    const ring = (this.#ring ??= new Uint8Array(new SharedArrayBuffer(SLOTS * SLOT_BYTES)));
    while (at < chunk.length) {
      if (this.#slot === undefined) {
        const slot = this.#free.pop();
        if (slot === undefined) {
          const from = at;
          this.#blocked = (error) => (error ? done(error) : this.#copy(chunk, from, done));
          return;
        }
        this.#slot = slot;
        this.#filled = 0;
      }
      const length = Math.min(chunk.length - at, SLOT_BYTES - this.#filled);
      ring.set(chunk.subarray(at, at + length), this.#slot * SLOT_BYTES + this.#filled);
      at += length;
      this.#filled += length;
      if (this.#filled === SLOT_BYTES) this.#send();
    }
    done();
  }

  /** Hands the slot being filled to the worker. */
  #send(): void {
    this.#id ??= thread.open(this.#ring!.buffer as SharedArrayBuffer, SLOT_BYTES, {
      freed: (slot) => {
        this.#free.push(slot);
        const blocked = this.#blocked;
        this.#blocked = undefined;
        blocked?.();
      },
      digested: (hex) => this.#settle.resolve(hex),
      failed: (error) => this.#fail(error),
    });
    thread.post({ type: 'update', id: this.#id, slot: this.#slot!, length: this.#filled });
    this.#slot = undefined;
  }

  #fail(error: Error): void {
    this.#settle.reject(error);
    const blocked = this.#blocked;
    this.#blocked = undefined;
    blocked?.(error);
  }
}

/** How a stream hears from the worker. */
interface DigestListener {
  freed(slot: number): void;
  digested(hex: string): void;
  failed(error: Error): void;
}

/**
 * The one worker thread that hashes every stream of the process, started with the first stream
 * that fills a slot and kept for the next ones; it keeps the process alive only while it has work.
 * If it stops, the streams it was hashing fail and the next stream starts another.
 */
class Sha512Thread {
  #worker: Worker | undefined;
  readonly #listeners = new Map<number, DigestListener>();
  #lastId = 0;

  open(ring: SharedArrayBuffer, slotBytes: number, listener: DigestListener): number {
    const worker = this.#worker ?? this.#start();
    if (this.#listeners.size === 0) worker.ref();
    const id = ++this.#lastId;
    this.#listeners.set(id, listener);
    worker.postMessage({ type: 'open', id, ring, slotBytes } satisfies DigestRequest);
    return id;
  }

  post(request: DigestRequest): void {
    this.#worker?.postMessage(request);
  }

  /** Forgets a stream that will not end (its answers still on the way are ignored). */
  drop(id: number): void {
    this.post({ type: 'drop', id });
    this.#close(id);
  }

  #close(id: number): void {
    this.#listeners.delete(id);
    if (this.#listeners.size === 0) this.#worker?.unref();
  }

  #start(): Worker {
    const worker = startModuleWorker(import.meta.url, 'sha512-worker');
    worker.on('message', (answer: DigestAnswer) => {
      const listener = this.#listeners.get(answer.id);
      if (answer.type === 'free') listener?.freed(answer.slot);
      else {
        this.#close(answer.id);
        listener?.digested(answer.hex);
      }
    });
    const lost = (error: Error) => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      const listeners = [...this.#listeners.values()];
      this.#listeners.clear();
      for (const listener of listeners) listener.failed(error);
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`The SHA-512 worker stopped (exit code ${code})`)));
    this.#worker = worker;
    return worker;
  }
}

const thread = new Sha512Thread();
