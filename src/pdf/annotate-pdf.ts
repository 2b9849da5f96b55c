import { appendPageAnnotations } from './annotations.js';
import { updatePdf } from './appendable-pdf.js';
import { pageGeometries } from './geometry.js';
import { memorySource } from './reader/byte-source.js';
import { buildAnnotations } from './visuals/build-annotations.js';
import type { ImageVisual, SignatureVisual, TextAnnotation } from './visuals/visual-types.js';
import { IncrementalUpdate, wholeFile } from './writer/incremental-writer.js';

export interface AnnotatePdfOptions {
  pdf: Uint8Array;
  /** Images, e.g. the document's QR barcode (spec: Image entry). */
  images?: ImageVisual[];
  /** Text annotations (Contract: `annotations` entries). */
  annotations?: TextAnnotation[];
  /** Signature-like visuals placed without a digital signature (`signatures` in an annotate body). */
  signatures?: SignatureVisual[];
  /** Author written as the annotations' /T and drawn in image-less signature visuals. */
  author?: string;
  /** The annotations' modification date, and the time drawn when `timestamp` is true (default now). */
  time?: Date;
}

/**
 * PUT /documents/annotate: adds images and text as annotations with their own appearance streams in
 * one incremental update, without a signature, so earlier signatures stay valid (DESIGN).
 *
 * ```ts
 * const annotated = await annotatePdf({ pdf, images: [{ pages: [1], position, image: await qrPng({ text: url }), subtype: 'image_barcode' }] });
 * ```
 */
export async function annotatePdf(options: AnnotatePdfOptions): Promise<Uint8Array> {
  return updatePdf(memorySource(options.pdf), (opened) => {
    const update = new IncrementalUpdate(opened);
    const pages = pageGeometries(opened);
    const { byPage } = buildAnnotations({
      update,
      pages,
      signatures: options.signatures,
      images: options.images,
      annotations: options.annotations,
      signerName: options.author,
      time: options.time ?? new Date(),
      locked: false,
      reserveWidget: false,
    });
    if (byPage.size === 0) return options.pdf;
    appendPageAnnotations({ opened, update, pages, additions: byPage });
    return wholeFile(update.write());
  });
}
