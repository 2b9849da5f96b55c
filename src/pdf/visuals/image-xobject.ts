import { createHash } from 'node:crypto';
import { PDF, PdfStream, type PdfRef } from '@libpdf/core';
import { ImageInvalid } from '../errors.js';
import type { IncrementalUpdate } from '../writer/incremental-writer.js';

export interface EmbeddedImage {
  ref: PdfRef;
  /** Pixels. */
  width: number;
  height: number;
}

/**
 * Image XObjects for PNG and JPEG bytes, written into an incremental update. Decoding is
 * @libpdf/core's (JPEG kept as DCTDecode; PNG re-compressed, alpha as an SMask), in a scratch
 * document of its own: the document being signed is read lazily and never given to the engine. The
 * objects are then given numbers in our update. One XObject per distinct image per update, however
 * many pages show it.
 *
 * ```ts
 * const images = new ImageXObjects(update);
 * const { ref, width, height } = images.embed({ bytes: png, path: 'signatures[0]' });
 * ```
 */
export class ImageXObjects {
  readonly #update: IncrementalUpdate;
  readonly #cache = new Map<string, EmbeddedImage>();
  #scratch?: PDF;

  constructor(update: IncrementalUpdate) {
    this.#update = update;
  }

  embed(options: { bytes: Uint8Array; path: string }): EmbeddedImage {
    const key = createHash('sha256').update(options.bytes).digest('hex');
    const cached = this.#cache.get(key);
    if (cached) return cached;
    const pdf = (this.#scratch ??= PDF.create());
    let image: ReturnType<typeof pdf.embedImage>;
    try {
      image = pdf.embedImage(options.bytes);
    } catch (error) {
      throw new ImageInvalid(
        `"${options.path}" is not a usable PNG or JPEG image (${error instanceof Error ? error.message : 'unreadable'})`,
      );
    }
    const stream = pdf.getObject(image.ref);
    if (!(stream instanceof PdfStream)) throw new ImageInvalid(`"${options.path}" could not be embedded`);
    const smask = stream.getRef('SMask');
    if (smask) {
      const mask = pdf.getObject(smask);
      if (mask instanceof PdfStream) stream.set('SMask', this.#update.add(mask));
    }
    const embedded = { ref: this.#update.add(stream), width: image.width, height: image.height };
    this.#cache.set(key, embedded);
    return embedded;
  }
}
