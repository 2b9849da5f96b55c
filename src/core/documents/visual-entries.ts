import type { Static } from 'typebox';
import type { ImageEntrySchema, SignatureEntrySchema, TextEntrySchema } from './visual-contract.js';

/** spec: Signature entry, as the API takes it. */
export type SignatureEntry = Static<typeof SignatureEntrySchema>;

/** spec: Image entry. */
export type ImageEntry = Static<typeof ImageEntrySchema>;

/** Contract: text annotation entry; `fieldId` names the share's signature field the text answers. */
export type TextEntry = Static<typeof TextEntrySchema>;
