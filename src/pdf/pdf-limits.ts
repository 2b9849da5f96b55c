import { createInflate, constants, inflateSync } from 'node:zlib';
import { PdfTooLarge } from './errors.js';

/**
 * What one PDF may cost the reader. @libpdf/core inflates every stream it reads whole, in memory and
 * on the event loop, with no ceiling, and parses every object at load: measured on this machine, a
 * 1 MB page content stream that inflates to 1 GiB took 35 s of CPU and 2.3 GB of memory to extract
 * text from, a 7 KB stream deflated twice (4 GiB) did not finish in 120 s, 100,000 pages (16 MB) took
 * 5.6 s to load and 1,000,000 objects (47 MB) 2.4 s. So the bytes are measured before the engine
 * sees them, and a file over any limit is refused with 413 LIMIT_EXCEEDED (`PdfTooLarge`).
 */
export const PDF_LIMITS = {
  /** A file read whole (larger ones are signed read lazily, never parsed whole: reader/lazy-pdf.ts). */
  fileBytes: 256 * 1024 * 1024,
  pages: 2_000,
  objects: 100_000,
  /** The decoded size of one stream. */
  streamBytes: 64 * 1024 * 1024,
  /** The decoded size of all streams of the file together. */
  totalStreamBytes: 256 * 1024 * 1024,
} as const;

const MIB = 1024 * 1024;

/**
 * Refuses (throws `PdfTooLarge`) a PDF whose objects, pages or decoded streams exceed `PDF_LIMITS`.
 * Reads the file as bytes, independently of the engine: object headers and object streams' /N give
 * the object count, page dictionaries (also those packed in object streams) the page count, and every
 * stream is decoded through its filter chain with a byte budget, stopping as soon as it is spent.
 * The engine's own page count is checked again after loading (`assertPageCount`).
 *
 * ```ts
 * await assertWithinPdfLimits(bytes);
 * const pdf = await PDF.load(bytes);
 * assertPageCount(pdf.getPageCount());
 * ```
 */
export async function assertWithinPdfLimits(bytes: Uint8Array): Promise<void> {
  assertFileBytes(bytes.length);
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  let objects = countObjectHeaders(text, PDF_LIMITS.objects);
  checkObjects(objects);
  let pages = count(text, PAGE_DICT, PDF_LIMITS.pages);
  assertPageCount(pages);
  const budget = { left: PDF_LIMITS.totalStreamBytes };
  for (const stream of streamsOf(text, bytes)) {
    const packed = /\/Type\s*\/ObjStm\b/.test(stream.dict);
    const decoded = await decodedStream(stream, budget, packed);
    if (packed) {
      objects += Number(/\/N\s+(\d+)/.exec(stream.dict)?.[1] ?? 0);
      if (decoded) pages += count(decoded.toString('latin1'), PAGE_DICT, PDF_LIMITS.pages);
      assertPageCount(pages);
    }
    checkObjects(objects);
  }
  checkObjects(objects);
  assertPageCount(pages);
}

/** Refuses a file larger than Signery reads whole (`PDF_LIMITS.fileBytes`). */
export function assertFileBytes(length: number): void {
  if (length > PDF_LIMITS.fileBytes) {
    throw new PdfTooLarge(
      `The PDF is larger than ${PDF_LIMITS.fileBytes / MIB} MiB, the most Signery reads whole`,
    );
  }
}

/** Refuses a page count over the limit (also called with the engine's own count after loading). */
export function assertPageCount(pages: number): void {
  if (pages > PDF_LIMITS.pages)
    throw new PdfTooLarge(`The PDF has more than ${PDF_LIMITS.pages} pages, the most Signery reads`);
}

function checkObjects(objects: number): void {
  if (objects > PDF_LIMITS.objects)
    throw new PdfTooLarge(`The PDF has more than ${PDF_LIMITS.objects} objects, the most Signery reads`);
}

/**
 * Object headers (`12 0 obj`: what `/(?<!\d)\d+\s+\d+\s+obj\b/g` finds), counting no further than one
 * past `max`. Read backwards from each `obj`: whitespace, digits, whitespace, digits, each run whole.
 * A regular expression tried from every position is quadratic in a run of digits (a signature's
 * zero-padded /Contents holds tens of thousands: ten of them took 26 s), and even anchored on the
 * run's first digit it reads every character of the file; this reads the `obj`s and what precedes them.
 */
function countObjectHeaders(text: string, max: number): number {
  let n = 0;
  for (let at = text.indexOf('obj'); at !== -1 && n <= max; at = text.indexOf('obj', at + 3)) {
    if (isWordCharacter(text.charCodeAt(at + 3))) continue;
    let i = at - 1;
    let complete = true;
    for (const inRun of [isWhitespace, isDigit, isWhitespace, isDigit]) {
      const end = i;
      while (i >= 0 && inRun(text.charCodeAt(i))) i--;
      if (i === end) {
        complete = false;
        break;
      }
    }
    if (complete) n++;
  }
  return n;
}

const isDigit = (code: number): boolean => code >= 0x30 && code <= 0x39;
// What `\s` matches among the characters a latin1 string holds.
const isWhitespace = (code: number): boolean =>
  (code >= 0x09 && code <= 0x0d) || code === 0x20 || code === 0xa0;
// What `\w` matches (the other side of `\b`).
const isWordCharacter = (code: number): boolean =>
  isDigit(code) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f;

// A page (not a page-tree node) dictionary.
const PAGE_DICT = /\/Type\s*\/Page(?![A-Za-z])/g;

/** Occurrences of `pattern`, counting no further than one past `max`. */
function count(text: string, pattern: RegExp, max: number): number {
  pattern.lastIndex = 0;
  let n = 0;
  while (n <= max && pattern.exec(text)) n++;
  return n;
}

interface RawStream {
  dict: string;
  data: Uint8Array;
}

/** Each `<<…>> stream … endstream` of the file, its dictionary read back to the `obj` keyword before it. */
function* streamsOf(text: string, bytes: Uint8Array): Generator<RawStream> {
  const keyword = />>\s*stream(\r\n|\n|\r)/g;
  for (let match = keyword.exec(text); match; match = keyword.exec(text)) {
    const start = match.index + match[0].length;
    const objAt = text.lastIndexOf('obj', match.index);
    const dict = text.slice(Math.max(objAt, match.index - 4096, 0), match.index + 2);
    const length = Number(/\/Length\s+(\d+)(?!\s+\d+\s+R)/.exec(dict)?.[1] ?? NaN);
    let end = text.indexOf('endstream', start);
    if (end < 0) end = text.length;
    if (Number.isSafeInteger(length) && start + length <= end) end = start + length;
    keyword.lastIndex = end;
    yield { dict, data: bytes.subarray(start, end) };
  }
}

/**
 * Decodes one stream's filter chain within the budget (throws `PdfTooLarge` past it). Answers the
 * decoded bytes when `keep` and the chain could be decoded whole, else undefined.
 */
async function decodedStream(
  stream: RawStream,
  budget: { left: number },
  keep: boolean,
): Promise<Buffer | undefined> {
  const filters = filterNames(stream.dict);
  let data: Buffer | undefined = Buffer.from(
    stream.data.buffer,
    stream.data.byteOffset,
    stream.data.byteLength,
  );
  let size = data.length;
  for (const [i, filter] of filters.entries()) {
    const limit = Math.min(PDF_LIMITS.streamBytes, budget.left);
    const needed = keep || i < filters.length - 1;
    if (data === undefined) {
      // A stage after one only measured (LZW, RunLength): its input is not at hand, so it counts at
      // the most that filter can make of it.
      size *= MAX_RATIO[filter] ?? 1;
    } else if (filter === 'FlateDecode' || filter === 'Fl') {
      const out = await inflated(data, limit, needed);
      size = out.size;
      data = out.data;
    } else if (filter === 'ASCIIHexDecode' || filter === 'AHx') {
      data = Buffer.from(
        data
          .toString('latin1')
          .replace(/>[\s\S]*$/, '')
          .replace(/[^0-9A-Fa-f]/g, ''),
        'hex',
      );
      size = data.length;
    } else if (filter === 'ASCII85Decode' || filter === 'A85') {
      data = ascii85(data);
      size = data.length;
    } else if (filter === 'LZWDecode' || filter === 'LZW') {
      size = lzwLength(data);
      data = undefined;
    } else if (filter === 'RunLengthDecode' || filter === 'RL') {
      size = runLengthLength(data);
      data = undefined;
    }
    // Image codecs (DCT, JPX, CCITT, JBIG2) are not decoded to read or sign a file: counted as stored.
    if (size > limit) throw overBudget(limit === budget.left);
  }
  if (size > Math.min(PDF_LIMITS.streamBytes, budget.left))
    throw overBudget(budget.left < PDF_LIMITS.streamBytes);
  budget.left -= size;
  return keep ? data : undefined;
}

function overBudget(total: boolean): PdfTooLarge {
  return new PdfTooLarge(
    total
      ? `The PDF's streams decompress to more than ${PDF_LIMITS.totalStreamBytes / MIB} MiB, the most Signery reads`
      : `A stream of the PDF decompresses to more than ${PDF_LIMITS.streamBytes / MIB} MiB, the most Signery reads`,
  );
}

// The most output one input byte can give (a 12-bit LZW code names up to ~4,000 bytes; a RunLength
// pair 128; Flate about 1,032).
const MAX_RATIO: Record<string, number> = {
  FlateDecode: 1032,
  Fl: 1032,
  LZWDecode: 2731,
  LZW: 2731,
  RunLengthDecode: 64,
  RL: 64,
  ASCII85Decode: 4,
  A85: 4,
};

function filterNames(dict: string): string[] {
  const filter = /\/Filter\s*(\/[^\s/[\]<>()]+|\[([^\]]*)\])/.exec(dict);
  if (!filter) return [];
  const names = filter[2] ?? filter[1]!;
  return [...names.matchAll(/\/([^\s/[\]<>()]+)/g)].map((m) => m[1]!);
}

/**
 * Inflates with zlib, counting the output and stopping past `limit`. Streaming, so a damaged stream
 * still counts what it gives before the damage (the engine keeps that part too).
 */
async function inflated(
  data: Buffer,
  limit: number,
  keep: boolean,
): Promise<{ size: number; data: Buffer | undefined }> {
  if (data.length * MAX_RATIO.FlateDecode! <= limit) {
    try {
      const out = inflateSync(data, { finishFlush: constants.Z_SYNC_FLUSH });
      return { size: out.length, data: keep ? out : undefined };
    } catch {
      // Damaged: measured below, chunk by chunk.
    }
  }
  return new Promise((resolve) => {
    const inflate = createInflate({ finishFlush: constants.Z_SYNC_FLUSH });
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      resolve({ size, data: keep && size <= limit ? Buffer.concat(chunks) : undefined });
    };
    inflate.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (keep && size <= limit) chunks.push(chunk);
      if (size > limit) {
        inflate.destroy();
        finish();
      }
    });
    inflate.on('error', finish);
    inflate.on('end', finish);
    inflate.on('close', finish);
    inflate.end(data);
  });
}

function ascii85(data: Buffer): Buffer {
  const out: number[] = [];
  let group = 0;
  let n = 0;
  for (const byte of data) {
    if (byte === 0x7e) break; // ~> ends the data
    if (byte === 0x7a && n === 0) {
      out.push(0, 0, 0, 0);
      continue;
    }
    if (byte < 0x21 || byte > 0x75) continue;
    group = group * 85 + (byte - 0x21);
    if (++n === 5) {
      out.push((group >>> 24) & 255, (group >>> 16) & 255, (group >>> 8) & 255, group & 255);
      group = 0;
      n = 0;
    }
  }
  if (n > 1) {
    for (let i = n; i < 5; i++) group = group * 85 + 84;
    for (let i = 0; i < n - 1; i++) out.push((group >>> (24 - 8 * i)) & 255);
  }
  return Buffer.from(out);
}

/** The length LZW data decodes to, from its codes alone (each table entry is its parent plus one byte). */
function lzwLength(data: Uint8Array): number {
  const lengths = new Uint32Array(4097);
  lengths.fill(1, 0, 256);
  let next = 258;
  let width = 9;
  let previous = -1;
  let total = 0;
  let buffer = 0;
  let bits = 0;
  for (const byte of data) {
    buffer = ((buffer << 8) | byte) >>> 0;
    bits += 8;
    while (bits >= width) {
      const code = (buffer >>> (bits - width)) & ((1 << width) - 1);
      bits -= width;
      if (code === 257) return total;
      if (code === 256) {
        next = 258;
        width = 9;
        previous = -1;
        continue;
      }
      const length = code < next ? lengths[code]! : previous >= 0 ? lengths[previous]! + 1 : 1;
      total += length;
      if (previous >= 0 && next < 4096) lengths[next++] = lengths[previous]! + 1;
      previous = code;
      // Early change (the PDF default): the width grows one code before the table fills it.
      if (next + 1 >= 1 << width && width < 12) width++;
    }
  }
  return total;
}

function runLengthLength(data: Uint8Array): number {
  let total = 0;
  for (let i = 0; i < data.length;) {
    const n = data[i]!;
    if (n === 128) break;
    if (n < 128) {
      total += n + 1;
      i += n + 2;
    } else {
      total += 257 - n;
      i += 2;
    }
  }
  return total;
}
