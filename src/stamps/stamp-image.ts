import { buffer } from 'node:stream/consumers';
import type { Deps } from '../deps.js';
import { FileNotUsable } from '../errors.js';
import type { FileRecord } from '../store/files/file-store.js';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff]);

/**
 * A stamp is drawn into signed PDFs, which embed PNG and JPEG only (pdf/visuals/image-xobject.ts).
 * The bytes are checked, not the client's Content-Type, so a stamp never fails later at signing.
 */
export async function assertStampImage(deps: Deps, file: FileRecord, field: string): Promise<void> {
  const size = Number(file.size);
  const head =
    size === 0
      ? Buffer.alloc(0)
      : await buffer(await deps.files.open(file, { start: 0, end: Math.min(size, 8) - 1 }));
  if (!startsWith(head, PNG) && !startsWith(head, JPEG)) {
    throw new FileNotUsable(`${field}: a stamp image must be a PNG or JPEG image`);
  }
}

function startsWith(bytes: Buffer, prefix: Buffer): boolean {
  return bytes.length >= prefix.length && bytes.subarray(0, prefix.length).equals(prefix);
}
