import type { Static } from 'typebox';
import { ValidationError } from '../../base/errors.js';
import type { Position } from '../../pdf/geometry.js';
import type { ImageEntrySchema, SignatureEntrySchema, TextEntrySchema } from './visual-contract.js';

/** spec: Signature entry, as the API takes it. */
export type SignatureEntry = Static<typeof SignatureEntrySchema>;

/** spec: Image entry. */
export type ImageEntry = Static<typeof ImageEntrySchema>;

/** Contract: text annotation entry; `fieldId` names the share's signature field the text answers. */
export type TextEntry = Static<typeof TextEntrySchema>;

/** An entry's `position`; without one it must name a field (`fieldId`), which gives it. */
export function positionOf(entry: { position?: Position | undefined }, at: string): Position {
  if (entry.position) return entry.position;
  throw new ValidationError(
    `${at}.position`,
    'is required unless "fieldId" names one of your share\'s fields',
  );
}
