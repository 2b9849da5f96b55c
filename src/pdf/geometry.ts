import { PdfArray, PdfDict, PdfNumber, type PdfObject, type PdfRef } from '@libpdf/core';
import type { AppendablePdf } from './appendable-pdf.js';
import { PositionOutOfRange } from './errors.js';

/** spec: Position. Fractions of the visible page, origin top left. */
export interface Position {
  percentX: number;
  percentY: number;
  percentWidth: number;
  percentHeight: number;
}

export type Rotation = 0 | 90 | 180 | 270;

/** A page as the reader sees it: its visible box in user space, its rotation and displayed size. */
export interface PageGeometry {
  /** 0-based. */
  index: number;
  ref: PdfRef;
  dict: PdfDict;
  /** The visible box (CropBox clipped to MediaBox) in user space: [llx, lly, urx, ury]. */
  box: [number, number, number, number];
  rotation: Rotation;
  /** Width and height as displayed (swapped for /Rotate 90 and 270). */
  width: number;
  height: number;
}

/** The pages of a document, each read and measured when first asked for. */
export interface PageGeometries {
  readonly count: number;
  /** The page at a 0-based index (a RangeError past the last). */
  at(index: number): PageGeometry;
}

/**
 * The geometry of the pages, computed for a page when it is first asked for (a signature touches one
 * page of however many): boxes and /Rotate are read with inheritance from the page tree (ISO 32000-1
 * 7.7.3.4), the CropBox is clipped to the MediaBox (14.11.2), rotation normalised.
 *
 * ```ts
 * const pages = pageGeometries(opened);
 * const { rect } = positionToRect({ page: pages.at(0), position });
 * ```
 */
export function pageGeometries(opened: AppendablePdf): PageGeometries {
  const measured = new Map<number, PageGeometry>();
  return {
    count: opened.pageCount,
    at(index) {
      let page = measured.get(index);
      if (!page) {
        page = pageGeometry(opened, index);
        measured.set(index, page);
      }
      return page;
    },
  };
}

function pageGeometry(opened: AppendablePdf, index: number): PageGeometry {
  const page = opened.page(index);
  const inherited = (key: string): PdfObject | undefined => {
    let node: PdfDict | undefined = page.dict;
    for (let depth = 0; node && depth < 64; depth++) {
      const value = opened.resolve(node.get(key));
      if (value !== undefined) return value;
      const parent = opened.resolve(node.get('Parent'));
      node = parent instanceof PdfDict ? parent : undefined;
    }
    return undefined;
  };
  const media = readBox(inherited('MediaBox')) ?? [0, 0, 612, 792];
  const crop = readBox(inherited('CropBox')) ?? media;
  const box: [number, number, number, number] = [
    Math.max(media[0], crop[0]),
    Math.max(media[1], crop[1]),
    Math.min(media[2], crop[2]),
    Math.min(media[3], crop[3]),
  ];
  if (box[2] <= box[0] || box[3] <= box[1]) box.splice(0, 4, ...media);
  const rotateObject = inherited('Rotate');
  const raw = rotateObject instanceof PdfNumber ? Math.round(rotateObject.value / 90) * 90 : 0;
  const rotation = (((raw % 360) + 360) % 360) as Rotation;
  const w = box[2] - box[0];
  const h = box[3] - box[1];
  const swapped = rotation === 90 || rotation === 270;
  return {
    index,
    ref: page.ref,
    dict: page.dict,
    box,
    rotation,
    width: swapped ? h : w,
    height: swapped ? w : h,
  };
}

function readBox(object: PdfObject | undefined): [number, number, number, number] | undefined {
  if (!(object instanceof PdfArray) || object.length < 4) return undefined;
  const values = object.toArray().slice(0, 4);
  if (!values.every((v) => v instanceof PdfNumber)) return undefined;
  const [x1, y1, x2, y2] = values.map((v) => v.value) as [number, number, number, number];
  return [Math.min(x1, x2), Math.min(y1, y2), Math.max(x1, x2), Math.max(y1, y2)];
}

/**
 * A user-space point as shown on the displayed page: points from the top-left corner.
 *
 * ```ts
 * const { u, v } = toDisplay(page, glyph.x, glyph.y); // u / page.width is a spec percentX
 * ```
 */
export function toDisplay(page: PageGeometry, x: number, y: number): { u: number; v: number } {
  const [llx, lly, urx, ury] = page.box;
  switch (page.rotation) {
    case 0:
      return { u: x - llx, v: ury - y };
    case 90:
      return { u: y - lly, v: x - llx };
    case 180:
      return { u: urx - x, v: y - lly };
    case 270:
      return { u: ury - y, v: urx - x };
  }
}

/**
 * The inverse of `toDisplay`.
 *
 * ```ts
 * const { x, y } = fromDisplay(page, 0.5 * page.width, 0.1 * page.height);
 * ```
 */
export function fromDisplay(page: PageGeometry, u: number, v: number): { x: number; y: number } {
  const [llx, lly, urx, ury] = page.box;
  switch (page.rotation) {
    case 0:
      return { x: llx + u, y: ury - v };
    case 90:
      return { x: llx + v, y: lly + u };
    case 180:
      return { x: urx - u, y: lly + v };
    case 270:
      return { x: urx - v, y: ury - u };
  }
}

export interface PlacedRect {
  /** The annotation /Rect in user space. */
  rect: [number, number, number, number];
  /** Size in points as displayed (the appearance stream's BBox). */
  width: number;
  height: number;
  /**
   * The appearance stream's /Matrix: turns the upright drawing by the page's rotation so it reads
   * upright once the viewer rotates the page (ISO 32000-1 12.5.5 maps BBox x Matrix onto Rect).
   */
  matrix: [number, number, number, number, number, number];
}

/**
 * Turns a spec Position (fractions of the displayed page, origin top left) into an annotation
 * rectangle, honouring the CropBox origin and /Rotate. Values outside 0..1 are refused here too
 * (spec: Limits, position values 0..1), with the API's validation wording.
 *
 * ```ts
 * const { rect, width, height, matrix } = positionToRect({ page, position, path: 'signatures[0].position' });
 * ```
 */
export function positionToRect(options: {
  page: PageGeometry;
  position: Position;
  path?: string;
}): PlacedRect {
  const { page, position } = options;
  checkPosition(position, options.path ?? 'position');
  const u0 = position.percentX * page.width;
  const v0 = position.percentY * page.height;
  const width = Math.max(position.percentWidth * page.width, 1);
  const height = Math.max(position.percentHeight * page.height, 1);
  const a = fromDisplay(page, u0, v0);
  const b = fromDisplay(page, u0 + width, v0 + height);
  return {
    rect: [Math.min(a.x, b.x), Math.min(a.y, b.y), Math.max(a.x, b.x), Math.max(a.y, b.y)],
    width,
    height,
    matrix: rotationMatrix(page.rotation),
  };
}

/** Counter-rotation for an appearance on a page the viewer turns clockwise by `rotation`. */
function rotationMatrix(rotation: Rotation): [number, number, number, number, number, number] {
  switch (rotation) {
    case 0:
      return [1, 0, 0, 1, 0, 0];
    case 90:
      return [0, 1, -1, 0, 0, 0];
    case 180:
      return [-1, 0, 0, -1, 0, 0];
    case 270:
      return [0, -1, 1, 0, 0, 0];
  }
}

/**
 * spec: Limits, "Position values 0..1"; width and height must be more than 0.
 *
 * ```ts
 * checkPosition(entry.position, 'signatures[0].position'); // throws PositionOutOfRange
 * ```
 */
export function checkPosition(position: Position, path: string): void {
  for (const key of ['percentX', 'percentY', 'percentWidth', 'percentHeight'] as const) {
    const value = position[key];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new PositionOutOfRange(`${path}.${key}`, 'must be a number');
    }
    if (value < 0) throw new PositionOutOfRange(`${path}.${key}`, 'must be greater than or equal to 0');
    if (value > 1) throw new PositionOutOfRange(`${path}.${key}`, 'must be less than or equal to 1');
  }
  if (position.percentWidth <= 0)
    throw new PositionOutOfRange(`${path}.percentWidth`, 'must be greater than 0');
  if (position.percentHeight <= 0)
    throw new PositionOutOfRange(`${path}.percentHeight`, 'must be greater than 0');
}

/**
 * The 0-based indexes of 1-based `pages`, each checked against the document.
 *
 * ```ts
 * pageIndexes({ pages: [1, 3], pageCount: 3, path: 'signatures[0].pages' }); // [0, 2]
 * ```
 */
export function pageIndexes(options: { pages: number[]; pageCount: number; path: string }): number[] {
  if (options.pages.length === 0) throw new PositionOutOfRange(options.path, 'must contain at least 1 items');
  return options.pages.map((page, i) => {
    if (!Number.isInteger(page) || page < 1) {
      throw new PositionOutOfRange(`${options.path}[${i}]`, 'must be greater than or equal to 1');
    }
    if (page > options.pageCount) {
      throw new PositionOutOfRange(
        `${options.path}[${i}]`,
        `must be less than or equal to ${options.pageCount}`,
      );
    }
    return page - 1;
  });
}

/**
 * A PDF rectangle array (numbers rounded to 1/1000 pt).
 *
 * ```ts
 * dict.set('Rect', rectArray([0, 0, 100, 50]));
 * ```
 */
export function rectArray(rect: readonly number[]): PdfArray {
  return new PdfArray(rect.map((n) => PdfNumber.of(round(n))));
}

/** Rounds to 1/1000: more precision than any device, fewer bytes. */
export function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
