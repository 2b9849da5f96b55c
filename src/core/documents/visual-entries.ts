import type { Position } from '../../pdf/geometry.js';
import type { SignatureVisual } from '../../pdf/visuals/visual-types.js';

/** spec: Signature entry, as the API takes it. */
export interface SignatureEntry {
  pages?: number[] | undefined;
  position: Position;
  blob?: string | undefined;
  decorationType?: string | undefined;
  type: SignatureVisual['type'];
  timestamp?: boolean | undefined;
  comment?: string | undefined;
}

/** spec: Image entry. */
export interface ImageEntry {
  comment?: string | undefined;
  position: Position;
  pages?: number[] | undefined;
  blob: string;
  subtype?: string | undefined;
}

/** Contract: text annotation entry. */
export interface TextEntry {
  /** The `customId` of the share's signature field this text answers (required fields). */
  fieldId?: string | undefined;
  subtype?: string | undefined;
  text: string;
  pages?: number[] | undefined;
  position: Position;
  align?: 'left' | 'center' | 'right' | undefined;
  fontSize?: number | undefined;
  bold?: boolean | undefined;
  color?: string | undefined;
  backgroundColor?: string | undefined;
}
