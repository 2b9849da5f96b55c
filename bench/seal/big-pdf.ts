import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';

const MB = 1024 * 1024;

/**
 * Writes a PDF of about `bytes` bytes to `path` without holding it in memory: a few pages, each
 * showing one large uncompressed greyscale image (what makes scanned contracts big), then a classic
 * cross-reference table. The image data repeats one random megabyte with a changing first word, so
 * no filesystem or compressor shortens it. Answers the file's exact size.
 *
 * ```ts
 * const size = writeBigPdf('/tmp/big.pdf', 1e9);
 * ```
 */
export function writeBigPdf(path: string, bytes: number, pages = 4): number {
  const fd = openSync(path, 'w');
  let offset = 0;
  const offsets: number[] = [];
  const put = (chunk: Buffer | string): void => {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk;
    for (let at = 0; at < buffer.length;) at += writeSync(fd, buffer, at);
    offset += buffer.length;
  };
  const object = (number: number, body: string): void => {
    offsets[number] = offset;
    put(`${number} 0 obj\n${body}\nendobj\n`);
  };
  try {
    put('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n');
    const pageNumber = (i: number): number => 3 + 3 * i;
    object(1, '<< /Type /Catalog /Pages 2 0 R >>');
    const kids = Array.from({ length: pages }, (_, i) => `${pageNumber(i)} 0 R`).join(' ');
    object(2, `<< /Type /Pages /Count ${pages} /Kids [${kids}] >>`);
    // Each image is a square of side `side` pixels, one byte each.
    const side = Math.max(16, Math.floor(Math.sqrt(bytes / pages)));
    const chunk = randomBytes(MB);
    for (let i = 0; i < pages; i++) {
      const page = pageNumber(i);
      object(
        page,
        `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${page + 1} 0 R ` +
          `/Resources << /XObject << /Im0 ${page + 2} 0 R >> >> >>`,
      );
      const content = `q 612 0 0 792 0 0 cm /Im0 Do Q`;
      object(page + 1, `<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
      offsets[page + 2] = offset;
      const length = side * side;
      put(
        `${page + 2} 0 obj\n<< /Type /XObject /Subtype /Image /Width ${side} /Height ${side} ` +
          `/ColorSpace /DeviceGray /BitsPerComponent 8 /Length ${length} >>\nstream\n`,
      );
      for (let written = 0, n = 0; written < length; n++) {
        chunk.writeUInt32LE(n + i * 1_000_000, 0);
        const size = Math.min(MB, length - written);
        put(chunk.subarray(0, size));
        written += size;
      }
      put('\nendstream\nendobj\n');
    }
    const size = offsets.length;
    const xref = offset;
    let table = `xref\n0 ${size}\n0000000000 65535 f\r\n`;
    for (let n = 1; n < size; n++) table += `${String(offsets[n]).padStart(10, '0')} 00000 n\r\n`;
    put(`${table}trailer\n<< /Size ${size} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
    return offset;
  } finally {
    closeSync(fd);
  }
}

/**
 * What this disk does for a seal of a file this size: read `path` and write a copy of it durably
 * (write, fsync), one megabyte at a time, the work a seal cannot avoid. Answers MB/s of the file.
 */
export function diskCopySpeed(path: string, size: number, copyPath: string): number {
  const started = performance.now();
  const input = openSync(path, 'r');
  const output = openSync(copyPath, 'w');
  try {
    const buffer = Buffer.allocUnsafe(MB);
    for (let at = 0; at < size;) {
      const read = readSync(input, buffer, 0, MB, at);
      if (read === 0) break;
      for (let written = 0; written < read;) written += writeSync(output, buffer, written, read - written);
      at += read;
    }
    fsyncSync(output);
  } finally {
    closeSync(input);
    closeSync(output);
    unlinkSync(copyPath);
  }
  return size / MB / ((performance.now() - started) / 1000);
}
