import type { ImageEntry, Position, SignatureFieldSpec, SignEntry, TextEntry } from './api.js';
import { DEFAULT_DATE_FORMAT, formatIsoDate, isoDateOf, todayIso } from './date-format.js';

export type FieldKind =
  'signature' | 'initials' | 'stamp' | 'image' | 'text' | 'file' | 'date' | 'checkbox' | 'select' | 'number';
/** Kinds filled with a picture the signer uploads (PNG or JPEG): a stamp, or any image. */
export const PICTURE_KINDS: readonly FieldKind[] = ['stamp', 'image'];
/** Kinds answered by a text in the sign call's `annotations` (the server checks each, field-types.ts). */
export type ValueKind = 'text' | 'date' | 'checkbox' | 'select' | 'number';

export interface FieldOption {
  value: string;
  label: string;
}

/** The messages (i18n.ts) of a number the field cannot take. */
export type NumberProblem =
  'number.invalid' | 'number.whole' | 'number.decimals' | 'number.range' | 'number.min' | 'number.max';

/** A number field's limits, from its `config`. */
export interface NumberRules {
  min?: number;
  max?: number;
  decimals?: number;
}

/** One thing the recipient fills in, on one or more pages. */
export interface Field {
  id: string;
  kind: FieldKind;
  pages: number[];
  position: Position;
  required: boolean;
  /** Placed by the signer (the share named no field): they may move it. */
  movable: boolean;
  /** How answers name the field: its `fieldId`, or its `customId` on shares from before fields had one. */
  answerId?: string;
  tooltip?: string;
  fontSize?: number;
  /** Filled in: the uploaded image's file id, or the attached file's name. */
  fileId?: string;
  previewUrl?: string;
  fileName?: string;
  /**
   * The answer of a value field, as the sign call sends it: the text, the date in the share's
   * format, `true`/`false`, the chosen option's value, the number.
   */
  text?: string;
  /** A date field's pattern (the share's `dateFormat`). */
  dateFormat?: string;
  options?: FieldOption[];
  numberRules?: NumberRules;
}

export const SUBMITTED_FILE = 'annotation_submitted_file';
const VALUE_SUBTYPES: Record<string, ValueKind> = {
  annotation_date: 'date',
  annotation_checkbox: 'checkbox',
  annotation_select: 'select',
  annotation_number: 'number',
};

export function isValueKind(kind: FieldKind): kind is ValueKind {
  return kind === 'text' || Object.values(VALUE_SUBTYPES).includes(kind as ValueKind);
}

const clamp = (value: number, min: number, max: number) => Math.min(Math.max(value, min), max);

/** Keeps a field on its page: positions are fractions 0..1 and a sign call refuses more (spec Position). */
export function clampPosition(position: Position): Position {
  const percentWidth = clamp(position.percentWidth, 0.02, 1);
  const percentHeight = clamp(position.percentHeight, 0.01, 1);
  return {
    percentX: round(clamp(position.percentX, 0, 1 - percentWidth)),
    percentY: round(clamp(position.percentY, 0, 1 - percentHeight)),
    percentWidth: round(percentWidth),
    percentHeight: round(percentHeight),
  };
}

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

function kindOf(spec: SignatureFieldSpec): FieldKind | undefined {
  if (spec.type === 'signature' || spec.type === 'wacom') return 'signature';
  if (spec.type === 'initials') return 'initials';
  // Optional only (POST /share refuses required ones): shown, and filled or skipped (issue 40).
  if (spec.type === 'stamp') return 'stamp';
  if (spec.type === 'image') return 'image';
  if (spec.type === 'annotation') {
    if (spec.subtype === SUBMITTED_FILE) return 'file';
    // Read-only text is annotated by the server with its predefined text: nothing to fill in.
    if (spec.readOnly) return undefined;
    return VALUE_SUBTYPES[spec.subtype ?? ''] ?? 'text';
  }
  return undefined;
}

/** A number field's `min`, `max` and `decimals` (the server refused a share whose config had others). */
function numberRules(config: string | undefined): NumberRules {
  try {
    const parsed = JSON.parse(config ?? '{}') as Record<string, unknown>;
    const rules: NumberRules = {};
    for (const key of ['min', 'max', 'decimals'] as const)
      if (typeof parsed[key] === 'number') rules[key] = parsed[key];
    return rules;
  } catch {
    return {};
  }
}

/** What a value field starts with: a date its predefined date, else today; a box unchecked. */
function initialAnswer(spec: SignatureFieldSpec, kind: FieldKind, dateFormat: string): string | undefined {
  if (kind === 'date') {
    const given = spec.text ? isoDateOf(spec.text, dateFormat) : undefined;
    return formatIsoDate(given ?? todayIso(), dateFormat);
  }
  if (kind === 'checkbox') return 'false';
  if (kind === 'text' && spec.text) return spec.text;
  return undefined;
}

/**
 * The recipient's fields from the share's signature fields (spec: Signature field), in the order they
 * are visited: `order` first, then page, then top to bottom, left to right. Signatures and initials
 * are required unless a field says `required: false`; other fields only when they say
 * `required: true`, as the server has it.
 */
export function fieldsFromShare(
  specs: SignatureFieldSpec[],
  pageCount: number,
  dateFormat: string = DEFAULT_DATE_FORMAT,
): Field[] {
  const fields: Field[] = [];
  specs.forEach((spec, index) => {
    const kind = kindOf(spec);
    if (!kind || !spec.position) return;
    const pages = (spec.pages?.length ? spec.pages : [1]).filter((p) => p >= 1 && p <= pageCount);
    if (pages.length === 0) return;
    const answer = initialAnswer(spec, kind, dateFormat);
    fields.push({
      id: `field-${index}`,
      kind,
      pages,
      position: clampPosition(spec.position),
      required:
        kind === 'signature' || kind === 'initials' ? spec.required !== false : spec.required === true,
      movable: false,
      ...(spec.fieldId || spec.customId ? { answerId: spec.fieldId || spec.customId } : {}),
      ...(spec.tooltip ? { tooltip: spec.tooltip } : {}),
      ...(spec.fontSize ? { fontSize: spec.fontSize } : {}),
      ...(answer !== undefined ? { text: answer } : {}),
      ...(kind === 'date' ? { dateFormat } : {}),
      ...(kind === 'select' ? { options: spec.options ?? [] } : {}),
      ...(kind === 'number' ? { numberRules: numberRules(spec.config) } : {}),
    });
  });
  const order = new Map(specs.map((s, i) => [`field-${i}`, s.order ?? Number.MAX_SAFE_INTEGER]));
  return fields.sort(
    (a, b) =>
      (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0) ||
      (a.pages[0] ?? 0) - (b.pages[0] ?? 0) ||
      a.position.percentY - b.position.percentY ||
      a.position.percentX - b.position.percentX,
  );
}

/**
 * A text the server stamps when the recipient signs, with nothing to fill in: a read-only annotation
 * field's predefined text, or an imported custom field's value (src/core/sharing/share-fields.ts
 * `fieldTexts`). Shown where and as it will be stamped, before signing (issue 40, 2).
 */
export interface StampedText {
  text: string;
  pages: number[];
  position: Position;
  /** In PDF points, as the stamp has it (12 unless the field says). */
  fontSize: number;
  align: 'left' | 'center' | 'right';
  bold: boolean;
  color?: string;
  backgroundColor?: string;
}

const HEX = /^#[0-9A-Fa-f]{6}$/;
const HEX_ALPHA = /^#[0-9A-Fa-f]{6}([0-9A-Fa-f]{2})?$/;

/** The read-only texts of the share's fields, with the server's defaults and limits. */
export function stampedTexts(specs: SignatureFieldSpec[], pageCount: number): StampedText[] {
  const texts: StampedText[] = [];
  for (const spec of specs) {
    if (spec.type !== 'annotation' || spec.readOnly !== true || !spec.position) continue;
    if (typeof spec.text !== 'string' || spec.text.trim() === '') continue;
    const pages = (spec.pages?.length ? spec.pages : [1]).filter((p) => p >= 1 && p <= pageCount);
    if (pages.length === 0) continue;
    const align = spec.align === 'center' || spec.align === 'right' ? spec.align : 'left';
    texts.push({
      text: spec.text,
      pages,
      position: spec.position,
      fontSize: typeof spec.fontSize === 'number' ? Math.min(144, Math.max(4, spec.fontSize)) : 12,
      align,
      bold: spec.bold === true,
      ...(spec.color && HEX.test(spec.color) ? { color: spec.color } : {}),
      ...(spec.backgroundColor && HEX_ALPHA.test(spec.backgroundColor)
        ? { backgroundColor: spec.backgroundColor }
        : {}),
    });
  }
  return texts;
}

/** Without fields from the share, one signature the signer places: by default low on the last page. */
export function placedSignature(pageCount: number, signed: readonly PlacedBox[] = []): Field {
  const page = Math.max(1, pageCount);
  const taken = signed.filter((box) => box.page === page).map((box) => box.position);
  // Bottom right first, as a signature usually goes; then the free spots around it, upwards, so that
  // later signers of a sequence do not sign over the earlier ones.
  const spots = [0.8, 0.68, 0.56, 0.44].flatMap((percentY) =>
    [0.55, 0.08].map((percentX) => ({ percentX, percentY, percentWidth: 0.32, percentHeight: 0.08 })),
  );
  const free = spots.find((spot) => !taken.some((box) => overlaps(spot, box)));
  return {
    id: 'placed-signature',
    kind: 'signature',
    pages: [page],
    position: free ?? spots[0]!,
    required: true,
    movable: true,
  };
}

/** A box already on a page of the PDF (an earlier signature), in fractions of the page. */
export interface PlacedBox {
  page: number;
  position: Position;
}

function overlaps(a: Position, b: Position): boolean {
  return (
    a.percentX < b.percentX + b.percentWidth &&
    b.percentX < a.percentX + a.percentWidth &&
    a.percentY < b.percentY + b.percentHeight &&
    b.percentY < a.percentY + a.percentHeight
  );
}

/** Initials on every page, bottom left (offered when the share named no fields). */
export function initialsOnEveryPage(pageCount: number): Field {
  return {
    id: 'placed-initials',
    kind: 'initials',
    pages: Array.from({ length: pageCount }, (_, i) => i + 1),
    position: { percentX: 0.06, percentY: 0.9, percentWidth: 0.12, percentHeight: 0.05 },
    required: true,
    movable: false,
  };
}

export function isDone(field: Field): boolean {
  if (field.kind === 'signature' || field.kind === 'initials' || PICTURE_KINDS.includes(field.kind))
    return field.fileId !== undefined;
  if (field.kind === 'file') return field.fileName !== undefined;
  if (field.kind === 'checkbox') return field.text === 'true';
  return (field.text ?? '').trim() !== '';
}

/** What a filled-in value field shows on the page: its text, date or number, or the option's label. */
export function shownAnswer(field: Field): string {
  if (field.kind === 'select') return field.options?.find((o) => o.value === field.text)?.label ?? '';
  return field.text ?? '';
}

/**
 * Why a number the signer typed cannot be the field's answer (as the server would refuse it), or
 * undefined: a decimal number, within `min` and `max`, with at most `decimals` digits after the point.
 */
export function numberProblem(
  value: string,
  { min, max, decimals }: NumberRules,
): { key: NumberProblem; values?: Record<string, number> } | undefined {
  if (!/^-?\d+(\.\d+)?$/.test(value)) return { key: 'number.invalid' };
  if (decimals !== undefined && (value.split('.')[1]?.length ?? 0) > decimals)
    return decimals === 0 ? { key: 'number.whole' } : { key: 'number.decimals', values: { count: decimals } };
  const n = Number(value);
  if ((min === undefined || n >= min) && (max === undefined || n <= max)) return undefined;
  if (min !== undefined && max !== undefined) return { key: 'number.range', values: { min, max } };
  return min !== undefined
    ? { key: 'number.min', values: { min } }
    : { key: 'number.max', values: { max: max! } };
}

/**
 * The body of the sign call for what was filled in: signatures, initials and stamps as entries, images
 * as image entries, the value fields as text annotations (a box checked or not, `true`/`false`). Each
 * names its field (`fieldId`) and carries the field's pages and position too, so a server that takes
 * them from the field and one that takes them from the entry agree.
 */
export function signBody(fields: Field[]): {
  signatures: SignEntry[];
  annotations: TextEntry[];
  images: ImageEntry[];
} {
  const signatures: SignEntry[] = [];
  const annotations: TextEntry[] = [];
  const images: ImageEntry[] = [];
  for (const field of fields) {
    const place = {
      ...(field.answerId ? { fieldId: field.answerId } : {}),
      pages: field.pages,
      position: field.position,
    };
    if ((field.kind === 'signature' || field.kind === 'initials' || field.kind === 'stamp') && field.fileId) {
      signatures.push({ type: field.kind, blob: field.fileId, ...place });
    } else if (field.kind === 'image' && field.fileId) {
      images.push({ blob: field.fileId, ...place });
    } else if (
      isValueKind(field.kind) &&
      field.text?.trim() &&
      (field.kind !== 'checkbox' || field.answerId)
    ) {
      annotations.push({
        ...(field.answerId ? { fieldId: field.answerId } : {}),
        text: field.text.trim(),
        pages: field.pages,
        position: field.position,
        ...(field.fontSize ? { fontSize: field.fontSize } : {}),
      });
    }
  }
  return { signatures, annotations, images };
}
