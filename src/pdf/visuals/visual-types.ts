import type { Position } from '../geometry.js';

/**
 * What a caller asks to be drawn, with blobs already resolved to bytes (the HTTP layer turns
 * `blob` file ids and stamp ids into image bytes; this library never reads storage).
 */

/**
 * spec: Signature entry. The types that place an image are all of them (`signature`, `initials`,
 * `stamp`, `annotation`, `image`, and the pen-tablet type `wacom`); without `image` the signer's name
 * is written in the box instead.
 */
export type SignatureVisualType = 'signature' | 'initials' | 'stamp' | 'annotation' | 'image' | 'wacom';

/**
 * decorationType values (spec: "one value is `empty`; other values: not shown"):
 * - `empty` (the default): the image alone;
 * - `line`: a thin signature line under the image;
 * - `frame`, and any other value: a thin border round the box.
 */
export type DecorationType = 'empty' | 'line' | 'frame' | (string & {});

export interface SignatureVisual {
  type: SignatureVisualType;
  /** 1-based page numbers. */
  pages: number[];
  position: Position;
  /** PNG or JPEG bytes. */
  image?: Uint8Array;
  /** Draws the signing time as text under the image (spec: "true places a timestamp under the signature"). */
  timestamp?: boolean;
  /** Stored as the annotation's /Contents (shown as its tooltip), not drawn. */
  comment?: string;
  decorationType?: DecorationType;
}

/** spec: Image entry (PUT /documents/annotate): an image, e.g. the document's QR barcode. */
export interface ImageVisual {
  pages: number[];
  position: Position;
  image: Uint8Array;
  comment?: string;
  /** `image_barcode` for the barcode image. */
  subtype?: string;
}

export type TextAlign = 'left' | 'center' | 'right';

/** Contract: text `annotations` entries `{subtype, text, pages, position, align, fontSize, bold, color, backgroundColor}`. */
export interface TextAnnotation {
  subtype?: string;
  text: string;
  pages: number[];
  position: Position;
  align?: TextAlign;
  /** Points (default 12); shrunk when the text would not fit the box. */
  fontSize?: number;
  bold?: boolean;
  /** Text colour, hex `#RRGGBB` (default black). */
  color?: string;
  /** Fill, hex with alpha `#RRGGBBAA` (or `#RRGGBB`); none by default. */
  backgroundColor?: string;
}
