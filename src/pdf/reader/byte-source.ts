import type { Hash } from 'node:crypto';
import { readSync } from 'node:fs';

/**
 * Random access to the bytes of a file, read where they are needed: a signature reads the end of the
 * file, its cross-reference data and a handful of objects, whatever the file's size. Reads are
 * synchronous: from memory, or from an open file, where the few kilobytes a signature reads come from
 * the page cache in microseconds (cheaper than a trip through the thread pool for each).
 *
 * ```ts
 * const source = memorySource(bytes);
 * const tail = source.read(source.length - 1024, source.length);
 * ```
 */
export interface ByteSource {
  readonly length: number;
  /** Bytes [start, end), clamped to the file. May be a view of memory the source owns: never write to it. */
  read(start: number, end: number): Uint8Array;
  /** The digest of the source's first bytes, when something else computes it anyway (`withKnownPrefix`). */
  readonly knownPrefix?: KnownPrefix;
}

/**
 * A hash's state after a source's first `bytes` bytes, computed by whoever reads them for another
 * purpose: a seal of a large stored file copies the original as it signs it, and the copy's SHA-256
 * serves the signature's byte ranges, which start with the whole original (issue 26).
 */
export interface KnownPrefix {
  /** Node's name of the hash (`sha256`). */
  algorithm: string;
  bytes: number;
  /** The state after those bytes; shared, so copy it (`Hash.copy`) before going on. */
  state: Promise<Hash>;
}

/**
 * `source`, whose first `prefix.bytes` bytes are hashed elsewhere: a signature's byte-range digest
 * starts from that state instead of reading them (signature-placeholder.ts, `byteRangeDigest`).
 *
 * ```ts
 * const source = withKnownPrefix(fileSource(fd, size), { algorithm: 'sha256', bytes: size, state });
 * ```
 */
export function withKnownPrefix(source: ByteSource, prefix: KnownPrefix): ByteSource {
  return { length: source.length, read: (start, end) => source.read(start, end), knownPrefix: prefix };
}

/** The bytes of a file held in memory (views, no copies). */
export function memorySource(bytes: Uint8Array): ByteSource {
  return {
    length: bytes.length,
    read: (start, end) => bytes.subarray(Math.max(0, start), Math.min(end, bytes.length)),
  };
}

/**
 * A file open for reading (`fd`) of `length` bytes; the caller closes it. Each read copies the range.
 *
 * ```ts
 * const handle = await open(path, 'r');
 * const source = fileSource(handle.fd, (await handle.stat()).size);
 * ```
 */
export function fileSource(fd: number, length: number): ByteSource {
  return {
    length,
    read(start, end) {
      const from = Math.max(0, start);
      const buffer = Buffer.allocUnsafe(Math.max(0, Math.min(end, length) - from));
      for (let at = 0; at < buffer.length;) {
        const read = readSync(fd, buffer, at, buffer.length - at, from + at);
        if (read === 0) return buffer.subarray(0, at);
        at += read;
      }
      return buffer;
    },
  };
}

/**
 * `base` followed by `tail`: a file after an incremental update, read without copying the file it
 * extends.
 *
 * ```ts
 * const updated = appendedSource(original, written.tail);
 * ```
 */
export function appendedSource(base: ByteSource, tail: Uint8Array): ByteSource {
  const split = base.length;
  return {
    length: split + tail.length,
    ...(base.knownPrefix ? { knownPrefix: base.knownPrefix } : {}),
    read(start, end) {
      const from = Math.max(0, start);
      const to = Math.min(end, split + tail.length);
      if (to <= split) return base.read(from, to);
      if (from >= split) return tail.subarray(from - split, to - split);
      return Buffer.concat([base.read(from, split), tail.subarray(0, to - split)]);
    },
  };
}

/** A PDF given to the engine: its bytes in memory, or a source that reads them where they are. */
export type PdfBytes = Uint8Array | ByteSource;

/**
 * The source of a PDF given either way.
 *
 * ```ts
 * const source = sourceOf(options.pdf);
 * ```
 */
export function sourceOf(pdf: PdfBytes): ByteSource {
  return pdf instanceof Uint8Array ? memorySource(pdf) : pdf;
}
