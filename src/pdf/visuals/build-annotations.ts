import { PdfDict, PdfName, PdfNumber, PdfStream, PdfString, type PdfRef } from '@libpdf/core';
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
import { formatNumber } from '../writer/serialize-object.js';
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
  /**
   * With `reserveWidget`, every visual on the widget's page is drawn in the widget's appearance (its
   * /Rect then spans them all) instead of an annotation of its own: a signature after another may add
   * only its field and widget for strict validators (pyHanko's difference analysis refuses any other
   * new annotation). Visuals on other pages stay annotations.
   */
  composeOnWidgetPage?: boolean;
}

export interface BuiltAnnotations {
  /** The first signature visual, for the signature field's widget. */
  widget?: { pageIndex: number; placed: PlacedRect; appearance: PdfRef; comment?: string };
  /** Annotation references to append to each page (0-based index). */
  byPage: Map<number, PdfRef[]>;
  /**
   * With `composeOnWidgetPage`, the pages (0-based) where visuals still became annotations of their
   * own: a field has one widget, on one page.
   */
  outsideWidget: number[];
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
  /** Visuals drawn in the widget's appearance (composeOnWidgetPage), the widget's own first. */
  const composed: { placed: PlacedRect; appearance: PdfRef }[] = [];
  const inWidget = (pageIndex: number, placed: PlacedRect, appearance: PdfRef): boolean => {
    if (!options.composeOnWidgetPage || widget?.pageIndex !== pageIndex) return false;
    composed.push({ placed, appearance });
    return true;
  };

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
      composed.push({ placed, appearance });
      continue;
    }
    if (inWidget(pageIndex, placed, appearance)) continue;
    const dict = common(pageIndex, placed, 'Stamp', appearance);
    dict.set('Name', PdfName.of(`Signery_${entry.type}`));
    if (options.signerName) dict.set('T', PdfString.fromString(options.signerName));
    if (entry.comment) dict.set('Contents', PdfString.fromString(entry.comment));
    add(pageIndex, update.add(dict));
  }

  for (const { entry, path, pageIndex, placed } of placedOnPages(pages, 'images', options.images)) {
    const appearance = appearances.image({ placed, image: entry.image, path });
    if (inWidget(pageIndex, placed, appearance)) continue;
    const dict = common(pageIndex, placed, 'Stamp', appearance);
    dict.set('Name', PdfName.of(entry.subtype === 'image_barcode' ? 'Signery_Barcode' : 'Signery_Image'));
    if (entry.comment) dict.set('Contents', PdfString.fromString(entry.comment));
    add(pageIndex, update.add(dict));
  }

  for (const { entry, path, pageIndex, placed } of placedOnPages(pages, 'annotations', options.annotations)) {
    const appearance = appearances.text({ placed, annotation: entry, path });
    if (inWidget(pageIndex, placed, appearance)) continue;
    const dict = common(pageIndex, placed, 'FreeText', appearance);
    dict.set('Contents', PdfString.fromString(entry.text));
    // /DA and /Q describe the text for viewers that edit it; the /AP above is what is shown.
    dict.set('DA', PdfString.fromString(`/Helv ${entry.fontSize ?? 12} Tf 0 g`));
    dict.set('Q', PdfNumber.of(entry.align === 'center' ? 1 : entry.align === 'right' ? 2 : 0));
    if (entry.subtype) dict.set('Subj', PdfString.fromString(entry.subtype));
    if (options.signerName) dict.set('T', PdfString.fromString(options.signerName));
    add(pageIndex, update.add(dict));
  }

  if (widget && composed.length > 1) {
    widget = { ...widget, ...composeAppearances(update, composed) };
  }
  const outsideWidget = options.composeOnWidgetPage ? [...byPage.keys()].sort((a, b) => a - b) : [];
  return { widget, byPage, outsideWidget };
}

/**
 * One appearance that draws `parts` where each would be drawn as an annotation of its own: a form
 * XObject in the page's user space (its /BBox the union of their /Rects, no /Matrix), painting each
 * part's form where ISO 32000-1 12.5.5 would put it (its /BBox turned by its /Matrix, moved onto its
 * /Rect; the part's /Matrix applies as it is painted).
 */
function composeAppearances(
  update: IncrementalUpdate,
  parts: { placed: PlacedRect; appearance: PdfRef }[],
): { placed: PlacedRect; appearance: PdfRef } {
  const union: [number, number, number, number] = [Infinity, Infinity, -Infinity, -Infinity];
  const xobjects = new PdfDict();
  const ops: string[] = [];
  for (const [i, { placed, appearance }] of parts.entries()) {
    const [x1, y1, x2, y2] = placed.rect;
    union[0] = Math.min(union[0], x1);
    union[1] = Math.min(union[1], y1);
    union[2] = Math.max(union[2], x2);
    union[3] = Math.max(union[3], y2);
    // The lower-left corner of the part's /BBox [0 0 width height] once its /Matrix has turned it.
    const [a, b, c, d] = placed.matrix;
    const corners = [
      [0, 0],
      [placed.width, 0],
      [0, placed.height],
      [placed.width, placed.height],
    ].map(([x, y]) => [a * x! + c * y!, b * x! + d * y!] as const);
    const left = Math.min(...corners.map(([x]) => x));
    const bottom = Math.min(...corners.map(([, y]) => y));
    xobjects.set(`V${i}`, appearance);
    ops.push(`q 1 0 0 1 ${formatNumber(x1 - left)} ${formatNumber(y1 - bottom)} cm /V${i} Do Q`);
  }
  const form = PdfStream.fromDict(
    {
      Type: PdfName.of('XObject'),
      Subtype: PdfName.of('Form'),
      BBox: rectArray(union),
      Resources: PdfDict.of({ XObject: xobjects }),
    },
    new Uint8Array(Buffer.from(ops.join('\n'), 'latin1')),
  );
  return {
    placed: {
      rect: union,
      width: union[2] - union[0],
      height: union[3] - union[1],
      matrix: [1, 0, 0, 1, 0, 0],
    },
    appearance: update.add(form),
  };
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
