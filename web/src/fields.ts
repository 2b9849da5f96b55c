import type { Position, SignatureFieldSpec, SignEntry, TextEntry } from './api.js';

export type FieldKind = 'signature' | 'initials' | 'text' | 'file';

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
  /** Filled in: the uploaded image's file id, the text, or the attached file's name. */
  fileId?: string;
  previewUrl?: string;
  text?: string;
  fileName?: string;
}

export const SUBMITTED_FILE = 'annotation_submitted_file';

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
  if (spec.type === 'annotation') {
    if (spec.subtype === SUBMITTED_FILE) return 'file';
    // Read-only text is annotated by the server with its predefined text: nothing to fill in.
    return spec.readOnly ? undefined : 'text';
  }
  return undefined;
}

/**
 * The recipient's fields from the share's signature fields (spec: Signature field), in the order they
 * are visited: `order` first, then page, then top to bottom, left to right.
 */
export function fieldsFromShare(specs: SignatureFieldSpec[], pageCount: number): Field[] {
  const fields: Field[] = [];
  specs.forEach((spec, index) => {
    const kind = kindOf(spec);
    if (!kind || !spec.position) return;
    const pages = (spec.pages?.length ? spec.pages : [1]).filter((p) => p >= 1 && p <= pageCount);
    if (pages.length === 0) return;
    fields.push({
      id: `field-${index}`,
      kind,
      pages,
      position: clampPosition(spec.position),
      required: spec.required !== false,
      movable: false,
      ...(spec.fieldId || spec.customId ? { answerId: spec.fieldId || spec.customId } : {}),
      ...(spec.tooltip ? { tooltip: spec.tooltip } : {}),
      ...(spec.fontSize ? { fontSize: spec.fontSize } : {}),
      ...(kind === 'text' && spec.text ? { text: spec.text } : {}),
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
  if (field.kind === 'signature' || field.kind === 'initials') return field.fileId !== undefined;
  if (field.kind === 'text') return (field.text ?? '').trim() !== '';
  return field.fileName !== undefined;
}

/** The body of the sign call for what was filled in (text fields become text annotations). */
export function signBody(fields: Field[]): { signatures: SignEntry[]; annotations: TextEntry[] } {
  const signatures: SignEntry[] = [];
  const annotations: TextEntry[] = [];
  for (const field of fields) {
    if ((field.kind === 'signature' || field.kind === 'initials') && field.fileId) {
      signatures.push({ type: field.kind, blob: field.fileId, pages: field.pages, position: field.position });
    } else if (field.kind === 'text' && field.text?.trim()) {
      annotations.push({
        ...(field.answerId ? { fieldId: field.answerId } : {}),
        text: field.text.trim(),
        pages: field.pages,
        position: field.position,
        ...(field.fontSize ? { fontSize: field.fontSize } : {}),
      });
    }
  }
  return { signatures, annotations };
}
