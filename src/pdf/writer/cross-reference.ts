import { deflateSync } from 'node:zlib';

/** One row of a cross-reference section (ISO 32000-1 7.5.4 and 7.5.8.3). */
export type XrefEntry =
  | { type: 'inUse'; offset: number; generation: number }
  /** An object packed in an object stream (cross-reference streams only). */
  | { type: 'compressed'; stream: number; index: number }
  | { type: 'free'; nextFree: number; generation: number };

export interface CrossReferenceOptions {
  entries: Map<number, XrefEntry>;
  /** The trailer's entries as PDF text (`/Root 1 0 R /ID [...] /Prev 123`), without /Size. */
  trailer: string;
  /** The offset in the file where the section starts (a stream's own entry points there). */
  offset: number;
  /** One more than the highest object number before the section. */
  size: number;
  /** Write a cross-reference stream (object `size`) rather than a table. */
  asStream: boolean;
}

/**
 * A cross-reference section and the file's end: a classic table with its trailer, or a
 * cross-reference stream (PDF 1.5, the only kind that can point into object streams), then
 * `startxref` and `%%EOF`. Subsections cover runs of consecutive object numbers, so a section lists
 * exactly the objects it is given.
 *
 * ```ts
 * const tail = crossReferenceSection({ entries, trailer: '/Root 1 0 R', offset: bytes.length, size: 12, asStream: false });
 * ```
 */
export function crossReferenceSection(options: CrossReferenceOptions): Buffer {
  const { trailer, offset, size } = options;
  const entries = new Map(options.entries);
  let section: string | Buffer;
  if (options.asStream) {
    entries.set(size, { type: 'inUse', offset, generation: 0 });
    const numbers = [...entries.keys()].sort((a, b) => a - b);
    const rows = Buffer.alloc(numbers.length * 7);
    numbers.forEach((number, row) => {
      const entry = entries.get(number)!;
      const [type, field2, field3] =
        entry.type === 'inUse'
          ? [1, entry.offset, entry.generation]
          : entry.type === 'compressed'
            ? [2, entry.stream, entry.index]
            : [0, entry.nextFree, entry.generation];
      rows.writeUInt8(type, row * 7);
      rows.writeUInt32BE(field2, row * 7 + 1);
      rows.writeUInt16BE(field3, row * 7 + 5);
    });
    const data = deflateSync(rows);
    const index = subsections(numbers)
      .map(([start, count]) => `${start} ${count}`)
      .join(' ');
    section = Buffer.concat([
      Buffer.from(
        `${size} 0 obj\n<< /Type /XRef /Size ${size + 1} /W [1 4 2] /Index [${index}] ${trailer} ` +
          `/Filter /FlateDecode /Length ${data.length} >>\nstream\n`,
        'latin1',
      ),
      data,
      Buffer.from('\nendstream\nendobj\n', 'latin1'),
    ]);
  } else {
    let table = 'xref\n';
    for (const [start, count] of subsections([...entries.keys()].sort((a, b) => a - b))) {
      table += `${start} ${count}\n`;
      for (let number = start; number < start + count; number++) table += tableRow(entries.get(number)!);
    }
    section = `${table}trailer\n<< /Size ${size} ${trailer} >>\n`;
  }
  return Buffer.concat([
    typeof section === 'string' ? Buffer.from(section, 'latin1') : section,
    Buffer.from(`startxref\n${offset}\n%%EOF\n`, 'latin1'),
  ]);
}

function tableRow(entry: XrefEntry): string {
  if (entry.type === 'compressed')
    throw new Error('A cross-reference table cannot point into an object stream');
  const [first, kind] = entry.type === 'inUse' ? [entry.offset, 'n'] : [entry.nextFree, 'f'];
  return `${String(first).padStart(10, '0')} ${String(entry.generation).padStart(5, '0')} ${kind}\r\n`;
}

/** Runs of consecutive object numbers: [[first, count], ...]. */
function subsections(sorted: number[]): [number, number][] {
  const runs: [number, number][] = [];
  for (const number of sorted) {
    const run = runs[runs.length - 1];
    if (run && run[0] + run[1] === number) run[1]++;
    else runs.push([number, 1]);
  }
  return runs;
}
