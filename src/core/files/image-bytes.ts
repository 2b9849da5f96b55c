import { buffer } from 'node:stream/consumers';
import type { Deps } from '../deps.js';
import { ValidationError } from '../../base/errors.js';
import type { FileRecord, StoredBytes } from '../../store/files/file-store.js';
import { imageStructure, type ImageStructure } from './image-structure.js';

/**
 * Whether stored bytes are, whole, a PNG or JPEG image (image-structure.ts): the only images signed
 * PDFs embed (pdf/visuals/image-xobject.ts), and the only ones a signature, initials, stamp, photo or
 * image upload may be (DESIGN, files answered to a browser). Checked on the bytes, never on the
 * Content-Type the client declared, so they are refused when they arrive rather than failing later, at
 * signing, or being something else (a page) that merely starts like an image.
 *
 * ```ts
 * if (!(await isPngOrJpeg(deps, stored))) throw new ValidationError('file', 'must be a PNG or JPEG image');
 * ```
 */
export async function isPngOrJpeg(deps: Deps, file: Pick<FileRecord, 'sha256' | 'size'>): Promise<boolean> {
  return (await imageOf(deps, file)).ok;
}

/** What the stored bytes are as an image, or why they are not one. */
export async function imageOf(
  deps: Deps,
  file: Pick<FileRecord, 'sha256' | 'size'>,
): Promise<ImageStructure> {
  const size = Number(file.size);
  if (size < 8) return { ok: false, reason: 'not a PNG or JPEG image' };
  if (size > MAX_IMAGE_BYTES)
    return { ok: false, reason: `an image of more than ${MAX_IMAGE_BYTES / 1_048_576} MiB` };
  return imageStructure(await buffer(await deps.files.open(file)));
}

/** Larger images are refused before they are read: no signature, stamp or photo needs them. */
const MAX_IMAGE_BYTES = 20 * 1_048_576;

/**
 * spec Files usage rule 2: signature and initials images are drawn into signed PDFs, so they are
 * refused at upload unless their bytes are a PNG or JPEG (the stored blob, never referenced, is
 * removed by the unreferenced-blob sweep).
 */
export async function assertSignatureImage(deps: Deps, stored: StoredBytes): Promise<void> {
  const image = await imageOf(deps, stored);
  if (!image.ok) {
    throw new ValidationError(
      'file',
      `must be a PNG or JPEG image (signature and initials images are drawn into signed PDFs): ${image.reason}`,
    );
  }
}

/**
 * Photos of users, contacts and enums, and a recipient's images for `images` (POST /share/upload/file
 * without `attach`): a PNG or JPEG image, whole (they are shown in browsers and drawn into PDFs).
 */
export async function assertUploadedImage(deps: Deps, stored: StoredBytes): Promise<void> {
  const image = await imageOf(deps, stored);
  if (!image.ok) throw new ValidationError('file', `must be a PNG or JPEG image: ${image.reason}`);
}
