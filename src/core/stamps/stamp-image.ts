import type { Deps } from '../deps.js';
import { FileNotUsable } from '../../base/errors.js';
import { isPngOrJpeg } from '../files/image-bytes.js';
import type { FileRecord } from '../../store/files/file-store.js';

/**
 * A stamp is drawn into signed PDFs, which embed PNG and JPEG only (pdf/visuals/image-xobject.ts).
 * The bytes are checked, not the client's Content-Type, so a stamp never fails later at signing.
 */
export async function assertStampImage(deps: Deps, file: FileRecord, field: string): Promise<void> {
  if (!(await isPngOrJpeg(deps, file))) {
    throw new FileNotUsable(`${field}: a stamp image must be a PNG or JPEG image`);
  }
}
