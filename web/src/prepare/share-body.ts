import type { Position } from '../api.js';

/**
 * What the prepare page builds: POST /share's body (spec Sharing; the server's contract is
 * src/sharing/contract.ts `ShareBody`, its fields src/core/documents/document-contract.ts
 * `SignatureField`). The page's "Send" posts exactly what "Copy JSON" gives.
 */

/** The kinds of field a sender draws, each one shape of the spec's signature field. */
export const FIELD_KINDS = [
  'signature',
  'initials',
  'text',
  'readOnlyText',
  'date',
  'checkbox',
  'stamp',
  'file',
] as const;
export type FieldKind = (typeof FIELD_KINDS)[number];

/** The purposes a recipient may be given (spec Sharing, `data[*].sharePurpose`). */
export const PURPOSES = ['sign', 'approve', 'review', 'accept', 'execute', 'view', 'edit'] as const;
export type Purpose = (typeof PURPOSES)[number];

export interface Recipient {
  /** An e-mail address (an external recipient) or a user name. */
  shareTo: string;
  sharePurpose: Purpose;
}

export interface DrawnField {
  kind: FieldKind;
  /** The recipient who fills it: their `shareTo`. */
  recipient: string;
  page: number;
  position: Position;
  required: boolean;
  /** A read-only text's text. */
  text: string;
}

/**
 * The spec's field for each kind (spec Signature field; field-types.ts for the value subtypes):
 * `type`, and for text-like fields the `annotation` subtype.
 */
const SHAPES: Record<FieldKind, { type: string; subtype?: string }> = {
  signature: { type: 'signature' },
  initials: { type: 'initials' },
  text: { type: 'annotation', subtype: 'annotation_generic' },
  readOnlyText: { type: 'annotation', subtype: 'annotation_generic' },
  date: { type: 'annotation', subtype: 'annotation_date' },
  checkbox: { type: 'annotation', subtype: 'annotation_checkbox' },
  stamp: { type: 'stamp' },
  file: { type: 'annotation', subtype: 'annotation_submitted_file' },
};

/** Whether a field of this kind is required when drawn (the sender may change it, where it can be). */
export function requiredByDefault(kind: FieldKind): boolean {
  return ['signature', 'initials', 'text', 'date', 'file'].includes(kind);
}

/**
 * Whether the sender can make this kind required: a read-only text is filled by no one, and the
 * server refuses a required stamp (share-fields.ts `checkFieldsCompletable`: the signer's page
 * cannot ask for one).
 */
export function canBeRequired(kind: FieldKind): boolean {
  return kind !== 'readOnlyText' && kind !== 'stamp';
}

/**
 * A fraction of a page as the body carries it: four decimals (a tenth of a point on an A4 page),
 * so that the JSON stays readable and what is sent is exactly what is shown.
 */
export function roundFraction(value: number): number {
  return Math.round(Math.min(Math.max(value, 0), 1) * 10_000) / 10_000;
}

export function roundedPosition(position: Position): Position {
  const percentX = roundFraction(position.percentX);
  const percentY = roundFraction(position.percentY);
  // Never past the page's edge (the server refuses a box that leaves the page).
  return {
    percentX,
    percentY,
    percentWidth: Math.min(roundFraction(position.percentWidth), roundFraction(1 - percentX)),
    percentHeight: Math.min(roundFraction(position.percentHeight), roundFraction(1 - percentY)),
  };
}

/** One drawn field as the spec's signature field. */
export function signatureField(field: DrawnField): Record<string, unknown> {
  const shape = SHAPES[field.kind];
  return {
    type: shape.type,
    ...(shape.subtype ? { subtype: shape.subtype } : {}),
    user: [field.recipient],
    pages: [field.page],
    position: roundedPosition(field.position),
    required: canBeRequired(field.kind) ? field.required : false,
    ...(field.kind === 'readOnlyText' ? { readOnly: true, text: field.text } : {}),
  };
}

/** POST /share's body for the document, its recipients and the drawn fields, in the order drawn. */
export function shareBody(
  documentId: string,
  recipients: Recipient[],
  fields: DrawnField[],
): Record<string, unknown> {
  return {
    id: documentId,
    objectType: 'document',
    data: recipients.map((r) => ({ sharePurpose: r.sharePurpose, shareTo: r.shareTo })),
    ...(fields.length > 0 ? { signatureFields: fields.map(signatureField) } : {}),
  };
}

/**
 * Which part of the body an API error names (`signatureFields[2].position`, `data[0].shareTo`), so
 * the page can show the message beside the field or recipient that caused it.
 */
export function blamed(message: string): { part: 'field' | 'recipient'; index: number } | undefined {
  const field = /signatureFields\[(\d+)\]/.exec(message);
  if (field?.[1]) return { part: 'field', index: Number(field[1]) };
  const recipient = /\bdata\[(\d+)\]/.exec(message);
  if (recipient?.[1]) return { part: 'recipient', index: Number(recipient[1]) };
  return undefined;
}
