import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';

export interface ZipEntry {
  name: string;
  open(): Promise<Readable>;
}

/**
 * Streams a ZIP archive (stored, not deflated: PDFs and images hardly compress) entry by entry, so an
 * archive of many large attachments never sits in memory. CRCs are computed on the way and written in
 * data descriptors. Without ZIP64: entries and the archive stay under 4 GB (attachments total ≤ 1 GB).
 *
 * ```ts
 * reply.type('application/zip').send(zipStream(files.map((f) => ({ name: f.name, open: () => store.open(f) }))));
 * ```
 */
export function zipStream(entries: ZipEntry[]): Readable {
  return Readable.from(generate(entries));
}

async function* generate(entries: ZipEntry[]): AsyncGenerator<Buffer> {
  const central: Buffer[] = [];
  let offset = 0;
  const names = new Set<string>();
  for (const entry of entries) {
    const name = Buffer.from(uniqueName(entry.name, names), 'utf8');
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(20, 4); // version needed
    header.writeUInt16LE(0x0808, 6); // data descriptor follows; names are UTF-8
    header.writeUInt16LE(0, 8); // stored
    header.writeUInt32LE(DOS_DATE_1980, 10);
    header.writeUInt16LE(name.length, 26);
    const localOffset = offset;
    yield header;
    yield name;
    offset += header.length + name.length;

    let crc = 0;
    let size = 0;
    for await (const chunk of await entry.open()) {
      const bytes = chunk as Buffer;
      crc = crc32(bytes, crc);
      size += bytes.length;
      yield bytes;
    }
    offset += size;
    const descriptor = Buffer.alloc(16);
    descriptor.writeUInt32LE(0x08074b50, 0);
    descriptor.writeUInt32LE(crc >>> 0, 4);
    descriptor.writeUInt32LE(size, 8);
    descriptor.writeUInt32LE(size, 12);
    yield descriptor;
    offset += descriptor.length;

    const record = Buffer.alloc(46);
    record.writeUInt32LE(0x02014b50, 0);
    record.writeUInt16LE(20, 4);
    record.writeUInt16LE(20, 6);
    record.writeUInt16LE(0x0808, 8);
    record.writeUInt16LE(0, 10);
    record.writeUInt32LE(DOS_DATE_1980, 12);
    record.writeUInt32LE(crc >>> 0, 16);
    record.writeUInt32LE(size, 20);
    record.writeUInt32LE(size, 24);
    record.writeUInt16LE(name.length, 28);
    record.writeUInt32LE(localOffset, 42);
    central.push(record, name);
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  yield directory;
  yield end;
}

// 1980-01-01 00:00 in DOS format: archives of the same files are then byte-identical.
const DOS_DATE_1980 = (1 << 21) | (1 << 16);

/** Two attachments may share a name; the archive gets `name (2).pdf` for the second. */
function uniqueName(name: string, taken: Set<string>): string {
  const safe = name.replace(/[\\/]+/g, '_') || 'file';
  let candidate = safe;
  for (let n = 2; taken.has(candidate); n++) {
    const dot = safe.lastIndexOf('.');
    candidate = dot > 0 ? `${safe.slice(0, dot)} (${n})${safe.slice(dot)}` : `${safe} (${n})`;
  }
  taken.add(candidate);
  return candidate;
}
