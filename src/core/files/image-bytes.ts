import { buffer } from 'node:stream/consumers';
import type { Deps } from '../deps.js';
import { ValidationError } from '../errors.js';
import type { FileRecord, StoredBytes } from '../../store/files/file-store.js';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff]);

/**
 * Whether stored bytes are a PNG or JPEG image: the only images signed PDFs embed
 * (pdf/visuals/image-xobject.ts). Signature, initials and stamp images are checked by their first
 * bytes, never by the Content-Type the client declared, so that they are refused when they arrive
 * rather than failing later, at signing.
 *
 * ```ts
 * if (!(await isPngOrJpeg(deps, stored))) throw new ValidationError('file', 'must be a PNG or JPEG image');
 * ```
 */
export async function isPngOrJpeg(deps: Deps, file: Pick<FileRecord, 'sha256' | 'size'>): Promise<boolean> {
  const size = Number(file.size);
  if (size < JPEG.length) return false;
  const head = await buffer(await deps.files.open(file, { start: 0, end: Math.min(size, PNG.length) - 1 }));
  return startsWith(head, PNG) || startsWith(head, JPEG);
}

/**
 * spec Files usage rule 2: signature and initials images are drawn into signed PDFs, so they are
 * refused at upload unless their bytes are a PNG or JPEG (the stored blob, never referenced, is
 * removed by the unreferenced-blob sweep).
 */
export async function assertSignatureImage(deps: Deps, stored: StoredBytes): Promise<void> {
  if (!(await isPngOrJpeg(deps, stored))) {
    throw new ValidationError(
      'file',
      'must be a PNG or JPEG image (signature and initials images are drawn into signed PDFs)',
    );
  }
}

function startsWith(bytes: Buffer, prefix: Buffer): boolean {
  return bytes.length >= prefix.length && bytes.subarray(0, prefix.length).equals(prefix);
}
