import { PdfDict, PdfName, PdfNumber, PdfString, type PdfRef } from '@libpdf/core';
import { annotationName, pdfDate } from '../annotations.js';
import {
  pageIndexes,
  positionToRect,
  rectArray,
  type PageGeometries,
  type PlacedRect,
  type Position,
} from '../geometry.js';
import type { IncrementalUpdate } from '../writer/incremental-writer.js';
import { AppearanceFactory } from './appearance-factory.js';
import type { ImageVisual, SignatureVisual, TextAnnotation } from './visual-types.js';

export interface BuildAnnotationsOptions {
  update: IncrementalUpdate;
  pages: PageGeometries;
  signatures?: SignatureVisual[];
  images?: ImageVisual[];
  annotations?: TextAnnotation[];
  /** Written into signature visuals without an image, and as the annotations' author (/T). */
  signerName?: string;
  /** Drawn when `timestamp` is true, and the annotations' /M. */
  time: Date;
  /** Signature revisions lock their visuals (Locked flag) so a viewer will not move or delete them. */
  locked: boolean;
  /** Keep the first signature visual's appearance for the signature widget instead of an annotation. */
  reserveWidget: boolean;
}

export interface BuiltAnnotations {
  /** The first signature visual, for the signature field's widget. */
  widget?: { pageIndex: number; placed: PlacedRect; appearance: PdfRef; comment?: string };
  /** Annotation references to append to each page (0-based index). */
  byPage: Map<number, PdfRef[]>;
}

const PRINT = 4;
const LOCKED = 128;

/**
 * Turns signature, image and text entries into annotations with their own appearance streams, one
 * per entry and page (DESIGN: visuals are annotations, never page content). Image-like entries
 * become /Stamp annotations, text entries /FreeText.
 *
 * ```ts
 * const { widget, byPage } = buildAnnotations({ update, pages, signatures, time, locked: true, reserveWidget: true });
 * ```
 */
export function buildAnnotations(options: BuildAnnotationsOptions): BuiltAnnotations {
  const { update, pages } = options;
  const appearances = new AppearanceFactory(update);
  const byPage = new Map<number, PdfRef[]>();
  const flags = PdfNumber.of(options.locked ? PRINT | LOCKED : PRINT);
  const add = (pageIndex: number, ref: PdfRef): void => {
    byPage.set(pageIndex, [...(byPage.get(pageIndex) ?? []), ref]);
  };
  const common = (pageIndex: number, placed: PlacedRect, subtype: string, appearance: PdfRef): PdfDict =>
    PdfDict.of({
      Type: PdfName.of('Annot'),
      Subtype: PdfName.of(subtype),
      Rect: rectArray(placed.rect),
      P: pages.at(pageIndex).ref,
      F: flags,
      NM: annotationName('signery'),
      M: pdfDate(options.time),
      AP: PdfDict.of({ N: appearance }),
    });
  let widget: BuiltAnnotations['widget'];

  for (const { entry, path, pageIndex, placed } of placedOnPages(pages, 'signatures', options.signatures)) {
    const appearance = appearances.signature({
      placed,
      visual: entry,
      signerName: options.signerName ?? '',
      signingTime: options.time,
      path,
    });
    if (options.reserveWidget && !widget) {
      widget = { pageIndex, placed, appearance, comment: entry.comment };
      continue;
    }
    const dict = common(pageIndex, placed, 'Stamp', appearance);
    dict.set('Name', PdfName.of(`Signery_${entry.type}`));
    if (options.signerName) dict.set('T', PdfString.fromString(options.signerName));
    if (entry.comment) dict.set('Contents', PdfString.fromString(entry.comment));
    add(pageIndex, update.add(dict));
  }

  for (const { entry, path, pageIndex, placed } of placedOnPages(pages, 'images', options.images)) {
    const dict = common(pageIndex, placed, 'Stamp', appearances.image({ placed, image: entry.image, path }));
    dict.set('Name', PdfName.of(entry.subtype === 'image_barcode' ? 'Signery_Barcode' : 'Signery_Image'));
    if (entry.comment) dict.set('Contents', PdfString.fromString(entry.comment));
    add(pageIndex, update.add(dict));
  }

  for (const { entry, path, pageIndex, placed } of placedOnPages(pages, 'annotations', options.annotations)) {
    const dict = common(pageIndex, placed, 'FreeText', appearances.text({ placed, annotation: entry, path }));
    dict.set('Contents', PdfString.fromString(entry.text));
    // /DA and /Q describe the text for viewers that edit it; the /AP above is what is shown.
    dict.set('DA', PdfString.fromString(`/Helv ${entry.fontSize ?? 12} Tf 0 g`));
    dict.set('Q', PdfNumber.of(entry.align === 'center' ? 1 : entry.align === 'right' ? 2 : 0));
    if (entry.subtype) dict.set('Subj', PdfString.fromString(entry.subtype));
    if (options.signerName) dict.set('T', PdfString.fromString(options.signerName));
    add(pageIndex, update.add(dict));
  }

  return { widget, byPage };
}

/**
 * Each entry of a list (`signatures`, `images`, `annotations`) on each of its pages, placed, with the
 * path its errors name (`images[1].position`). Entries are checked as they come, so the first
 * invalid one is the one reported.
 */
function* placedOnPages<Entry extends { pages: number[]; position: Position }>(
  pages: PageGeometries,
  field: string,
  entries: Entry[] | undefined,
): Generator<{ entry: Entry; path: string; pageIndex: number; placed: PlacedRect }> {
  for (const [i, entry] of (entries ?? []).entries()) {
    const path = `${field}[${i}]`;
    for (const pageIndex of pageIndexes({
      pages: entry.pages,
      pageCount: pages.count,
      path: `${path}.pages`,
    })) {
      const placed = positionToRect({
        page: pages.at(pageIndex),
        position: entry.position,
        path: `${path}.position`,
      });
      yield { entry, path, pageIndex, placed };
    }
  }
}
