import { deflateSync } from 'node:zlib';
import { PdfArray, PdfDict, PdfName, PdfNumber, PdfStream, type PdfRef } from '@libpdf/core';
import { ValidationError } from '../../base/errors.js';
import { rectArray, round, type PlacedRect } from '../geometry.js';
import type { IncrementalUpdate } from '../writer/incremental-writer.js';
import { ImageXObjects, type EmbeddedImage } from './image-xobject.js';
import { fontDict, pdfTextLiteral, textWidth, wrapText, type FontName } from './standard-font.js';
import type { SignatureVisual, TextAnnotation } from './visual-types.js';

/**
 * Builds appearance streams (Form XObjects) for annotations, sharing fonts and images within one
 * update. DESIGN: a signer's visuals are annotations with their own appearance streams, never new
 * page content. Each stream is drawn upright in a `width` x `height` box and carries the /Matrix that
 * counter-rotates it on rotated pages.
 *
 * ```ts
 * const appearances = new AppearanceFactory(update);
 * const ap = appearances.image({ placed, image: png, path: 'images[0]' });
 * ```
 */
export class AppearanceFactory {
  readonly #update: IncrementalUpdate;
  readonly #images: ImageXObjects;
  readonly #fonts = new Map<FontName, PdfRef>();

  constructor(update: IncrementalUpdate) {
    this.#update = update;
    this.#images = new ImageXObjects(update);
  }

  /** A signature entry: its image (or the signer's name), the signing time under it when asked, a decoration. */
  signature(options: {
    placed: PlacedRect;
    visual: SignatureVisual;
    signerName: string;
    signingTime: Date;
    path: string;
  }): PdfRef {
    const { placed, visual } = options;
    const { width, height } = placed;
    const ops: string[] = [];
    const resources = new Resources();
    const pad = Math.min(2, width * 0.05, height * 0.05);
    let bottom = pad;
    if (visual.timestamp) {
      // The time takes the bottom strip: at most a quarter of the box, text at most 9 pt.
      const text = formatTime(options.signingTime);
      const strip = Math.min(height * 0.25, 14);
      let size = Math.min(9, strip * 0.75);
      size = Math.min(size, ((width - 2 * pad) / Math.max(textWidth('Helvetica', text, size), 1)) * size);
      const font = resources.font('Helvetica', this.#font('Helvetica'));
      const x = (width - textWidth('Helvetica', text, size)) / 2;
      ops.push(
        `BT ${font} ${num(size)} Tf 0 g ${num(x)} ${num(bottom + size * 0.25)} Td ${pdfTextLiteral(text)} Tj ET`,
      );
      bottom += strip;
    }
    const area = { x: pad, y: bottom, width: width - 2 * pad, height: height - bottom - pad };
    if (visual.image) {
      const image = this.#images.embed({ bytes: visual.image, path: `${options.path}.image` });
      ops.push(drawImage(resources.image(image), image, area));
    } else {
      const lines = [options.signerName || 'Signed'];
      ops.push(
        this.#textBlock({
          resources,
          lines,
          area,
          font: 'Helvetica-Bold',
          size: 12,
          align: 'center',
          color: '0 g',
        }),
      );
    }
    const decoration = visual.decorationType ?? 'empty';
    if (decoration === 'line') {
      ops.push(`q 0.3 G 0.75 w ${num(pad)} ${num(area.y)} m ${num(width - pad)} ${num(area.y)} l S Q`);
    } else if (decoration !== 'empty') {
      ops.push(`q 0.3 G 0.75 w 0.375 0.375 ${num(width - 0.75)} ${num(height - 0.75)} re S Q`);
    }
    return this.#stream(placed, ops, resources);
  }

  /** An image entry (a barcode, a picture), fitted into the box keeping its proportions. */
  image(options: { placed: PlacedRect; image: Uint8Array; path: string }): PdfRef {
    const resources = new Resources();
    const image = this.#images.embed({ bytes: options.image, path: `${options.path}.image` });
    const { width, height } = options.placed;
    return this.#stream(
      options.placed,
      [drawImage(resources.image(image), image, { x: 0, y: 0, width, height })],
      resources,
    );
  }

  /** A text annotation: background, then the text wrapped to the box and aligned. */
  text(options: { placed: PlacedRect; annotation: TextAnnotation; path: string }): PdfRef {
    const { placed, annotation, path } = options;
    const resources = new Resources();
    const ops: string[] = [];
    if (annotation.backgroundColor) {
      const fill = parseColor(annotation.backgroundColor, `${path}.backgroundColor`);
      // The alpha applies to the fill only: q/Q keeps the text opaque.
      const state = fill.alpha < 1 ? `${resources.alpha(fill.alpha)} gs ` : '';
      ops.push(`q ${state}${fill.rgb} rg 0 0 ${num(placed.width)} ${num(placed.height)} re f Q`);
    }
    const color = annotation.color ? parseColor(annotation.color, `${path}.color`).rgb : '0 0 0';
    const font: FontName = annotation.bold ? 'Helvetica-Bold' : 'Helvetica';
    const pad = Math.min(2, placed.width * 0.05, placed.height * 0.05);
    ops.push(
      this.#textBlock({
        resources,
        lines: [annotation.text],
        area: { x: pad, y: pad, width: placed.width - 2 * pad, height: placed.height - 2 * pad },
        font,
        size: annotation.fontSize ?? 12,
        align: annotation.align ?? 'left',
        color: `${color} rg`,
        top: true,
      }),
    );
    return this.#stream(placed, ops, resources);
  }

  /** Wraps text into the area, shrinking the size until it fits; top- or centre-aligned vertically. */
  #textBlock(options: {
    resources: Resources;
    lines: string[];
    area: { x: number; y: number; width: number; height: number };
    font: FontName;
    size: number;
    align: 'left' | 'center' | 'right';
    color: string;
    top?: boolean;
  }): string {
    const { area, font } = options;
    let size = Math.max(options.size, 1);
    let lines: string[] = [];
    for (; size > 2; size *= 0.9) {
      lines = options.lines.flatMap((text) => wrapText({ text, font, size, maxWidth: area.width }));
      const fitsWidth = lines.every((line) => textWidth(font, line, size) <= area.width);
      if (fitsWidth && lines.length * size * 1.2 <= area.height) break;
    }
    const leading = size * 1.2;
    const blockHeight = lines.length * leading;
    const startTop = options.top ? area.y + area.height : area.y + (area.height + blockHeight) / 2;
    const name = options.resources.font(font, this.#font(font));
    const ops = [
      `q ${num(area.x)} ${num(area.y)} ${num(area.width)} ${num(area.height)} re W n BT ${options.color}`,
    ];
    lines.forEach((line, i) => {
      const lineWidth = textWidth(font, line, size);
      const x =
        options.align === 'center'
          ? area.x + (area.width - lineWidth) / 2
          : options.align === 'right'
            ? area.x + area.width - lineWidth
            : area.x;
      // Baseline: one ascent (~0.8 em) below the line's top.
      const y = startTop - i * leading - size * 0.8 - (leading - size) / 2;
      ops.push(`${name} ${num(size)} Tf 1 0 0 1 ${num(x)} ${num(y)} Tm ${pdfTextLiteral(line)} Tj`);
    });
    ops.push('ET Q');
    return ops.join('\n');
  }

  #font(font: FontName): PdfRef {
    let ref = this.#fonts.get(font);
    if (!ref) {
      ref = this.#update.add(fontDict(font));
      this.#fonts.set(font, ref);
    }
    return ref;
  }

  #stream(placed: PlacedRect, ops: string[], resources: Resources): PdfRef {
    const content = deflateSync(Buffer.from(ops.join('\n'), 'latin1'));
    const stream = PdfStream.fromDict(
      {
        Type: PdfName.of('XObject'),
        Subtype: PdfName.of('Form'),
        BBox: rectArray([0, 0, placed.width, placed.height]),
        Matrix: new PdfArray(placed.matrix.map((n) => PdfNumber.of(n))),
        Resources: resources.toDict(),
        Filter: PdfName.of('FlateDecode'),
      },
      new Uint8Array(content),
    );
    return this.#update.add(stream);
  }
}

/** Resource names of one appearance stream. */
class Resources {
  readonly #xobjects = new Map<string, PdfRef>();
  readonly #fonts = new Map<string, PdfRef>();
  readonly #states = new Map<string, number>();

  image(image: EmbeddedImage): string {
    const name = `Im${image.ref.objectNumber}`;
    this.#xobjects.set(name, image.ref);
    return `/${name}`;
  }

  font(font: FontName, ref: PdfRef): string {
    const name = font === 'Helvetica' ? 'Helv' : 'HeBo';
    this.#fonts.set(name, ref);
    return `/${name}`;
  }

  alpha(alpha: number): string {
    const name = `GS${this.#states.size}`;
    this.#states.set(name, alpha);
    return `/${name}`;
  }

  toDict(): PdfDict {
    const dict = new PdfDict();
    if (this.#xobjects.size) dict.set('XObject', PdfDict.of(Object.fromEntries(this.#xobjects)));
    if (this.#fonts.size) dict.set('Font', PdfDict.of(Object.fromEntries(this.#fonts)));
    if (this.#states.size) {
      const states: Record<string, PdfDict> = {};
      for (const [name, alpha] of this.#states) states[name] = PdfDict.of({ ca: PdfNumber.of(round(alpha)) });
      dict.set('ExtGState', PdfDict.of(states));
    }
    return dict;
  }
}

/** `q w 0 0 h x y cm /Im Do Q`, fitted ("contain") and centred in the area. */
function drawImage(
  name: string,
  image: EmbeddedImage,
  area: { x: number; y: number; width: number; height: number },
): string {
  const scale = Math.min(area.width / image.width, area.height / image.height);
  const w = image.width * scale;
  const h = image.height * scale;
  const x = area.x + (area.width - w) / 2;
  const y = area.y + (area.height - h) / 2;
  return `q ${num(w)} 0 0 ${num(h)} ${num(x)} ${num(y)} cm ${name} Do Q`;
}

/**
 * `#RGB`, `#RRGGBB` or `#RRGGBBAA` (the leading `#` optional) as PDF RGB operands and an alpha.
 *
 * ```ts
 * parseColor('#ff000080', 'annotations[0].backgroundColor'); // { rgb: '1 0 0', alpha: 0.502 }
 * ```
 */
export function parseColor(value: string, path: string): { rgb: string; alpha: number } {
  let hex = value.trim().replace(/^#/, '');
  if (/^[0-9a-f]{3,4}$/i.test(hex)) hex = [...hex].map((c) => c + c).join('');
  if (!/^[0-9a-f]{6}([0-9a-f]{2})?$/i.test(hex)) {
    throw new ValidationError(path, 'must be a hex colour such as #1a2b3c or #1a2b3c80');
  }
  const channel = (i: number): number => parseInt(hex.slice(i, i + 2), 16) / 255;
  return {
    rgb: `${num(channel(0))} ${num(channel(2))} ${num(channel(4))}`,
    alpha: hex.length === 8 ? channel(6) : 1,
  };
}

function num(n: number): string {
  return String(round(n));
}

/**
 * The time drawn under a signature: UTC, to the second.
 *
 * ```ts
 * formatTime(new Date('2025-01-02T03:04:05Z')); // '2025-01-02 03:04:05 UTC'
 * ```
 */
export function formatTime(date: Date): string {
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}
