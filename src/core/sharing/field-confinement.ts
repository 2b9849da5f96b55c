import type { Kysely } from 'kysely';
import { Forbidden, ValidationError } from '../../base/errors.js';
import type { Position } from '../../pdf/geometry.js';
import {
  positionOf,
  type ImageEntry,
  type SignatureEntry,
  type TextEntry,
} from '../documents/visual-entries.js';
import type { Database } from '../../store/db/schema.js';
import {
  fieldKey,
  isWrittenByShare,
  namesField,
  SUBMITTED_FILE,
  withShareFieldTexts,
  type SignatureFieldInput,
} from './share-fields.js';
import { shareOptions, type ShareRow } from './share-types.js';

/** What a recipient's call asks to draw (core/signing VisualRequest has this shape). */
export interface RecipientEntries {
  signatures?: SignatureEntry[] | undefined;
  images?: ImageEntry[] | undefined;
  annotations?: TextEntry[] | undefined;
}

/**
 * What a recipient's call draws, before anything is drawn or written: its entries confined to the
 * recipient's fields (confineToFields) and, for the signature of a sign share (`fieldTexts`), the
 * answers checked and turned into what is written and the share's read-only texts added
 * (withShareFieldTexts). Every call a recipient draws through goes here: PUT /share/document/sign,
 * POST /share/execute, PUT /share/reject, POST /inbox/action, a user's PUT /documents/sign and two-step
 * signing for their share.
 */
export async function recipientDrawing<R extends RecipientEntries>(
  db: Kysely<Database>,
  share: ShareRow,
  request: R,
  options: { fieldTexts: boolean },
): Promise<R> {
  const confined = confineToFields(share, request);
  if (!options.fieldTexts) return confined;
  const annotations = await withShareFieldTexts(db, share, {
    annotations: confined.annotations,
    signatures: confined.signatures ?? [],
  });
  return { ...confined, annotations };
}

/** Which field types each kind of entry fills (the signer's page shows a `wacom` field as a signature). */
const FILLS: Record<string, readonly string[]> = {
  signature: ['signature', 'wacom'],
  wacom: ['signature', 'wacom'],
  initials: ['initials'],
  stamp: ['stamp', 'image'],
  image: ['stamp', 'image'],
  text: ['annotation'],
};

/** How close an entry's box must be to a field's to fill it without naming it (old clients). */
const SAME_PLACE = 0.001;

interface Placeable {
  fieldId?: string | undefined;
  pages?: number[] | undefined;
  position?: Position | undefined;
}

/**
 * DESIGN "Decided this round": recipients draw only in the fields assigned to them (their share's
 * `signatureFields`, the ones GET /share/document shows them), unless the share grants `freePlacement`.
 * An entry naming a field by `fieldId` takes its `pages` and `position` from it; the field must be the
 * recipient's, one they fill in (not read-only, not imported) and of the entry's kind, else 400 naming
 * the entry. An entry without `fieldId` may fill the recipient's field of its kind at its place (within
 * 0.001), as clients that sent the field's own box did (it answers the field only by naming it);
 * otherwise it is free placement: 403 naming the right, except a signature or initials mark of a
 * recipient who has no field of that kind (the signer's page places their signature for them). No field is filled twice
 * in one call. Pure: nothing is read or written.
 */
export function confineToFields<R extends RecipientEntries>(share: ShareRow, request: R): R {
  const { signatureFields: fields, rights } = shareOptions(share);
  const free = rights.includes('freePlacement');
  const filled = new Map<SignatureFieldInput, string>();

  const place = <E extends Placeable>(entry: E, at: string, kind: string, ownMark: boolean): E => {
    const kinds = FILLS[kind] ?? [];
    const field =
      entry.fieldId === undefined ? fieldAt(entry, at, kinds) : namedField(entry.fieldId, at, kinds);
    if (!field) {
      // A signer given no field for their mark (no signature field, or no initials field) places it.
      const noFieldForIt = !fields.some((f) => kinds.includes(String(f.type)));
      if (free || (ownMark && noFieldForIt)) return entry;
      throw new Forbidden(
        `${at} fills none of your fields (name one with "fieldId"): placing it freely needs the share right freePlacement`,
      );
    }
    const earlier = filled.get(field);
    if (earlier !== undefined) {
      throw new ValidationError(
        entry.fieldId === undefined ? `${at}.position` : `${at}.fieldId`,
        `fills the field "${nameOf(field)}" that ${earlier} already fills: a field is filled once`,
      );
    }
    filled.set(field, at);
    // An entry filling a field by its place is let through as it was; only one naming its field is an
    // answer to it (required fields, value fields: withShareFieldTexts).
    return { ...entry, pages: pagesOf(field), position: field.position as Position };
  };

  const namedField = (id: string, at: string, kinds: readonly string[]): SignatureFieldInput => {
    const field = fields.find((f) => namesField(f, id));
    const path = `${at}.fieldId`;
    if (!field) throw new ValidationError(path, `"${id}" is not one of your fields`);
    if (isWrittenByShare(field))
      throw new ValidationError(path, `"${id}" is a read-only field: its text is written by the share`);
    if (field.subtype === SUBMITTED_FILE)
      throw new ValidationError(
        path,
        `"${id}" asks for a file: submit it with POST /share/upload/submittedFile`,
      );
    if (!kinds.includes(String(field.type)))
      throw new ValidationError(
        path,
        `"${id}" is a ${String(field.type)} field, which this entry cannot fill`,
      );
    return field;
  };

  const fieldAt = (entry: Placeable, at: string, kinds: readonly string[]) => {
    const position = positionOf(entry, at);
    const pages = entry.pages ?? [1];
    const there = fields.filter(
      (f) =>
        kinds.includes(String(f.type)) &&
        !isWrittenByShare(f) &&
        f.subtype !== SUBMITTED_FILE &&
        samePages(pagesOf(f), pages) &&
        samePosition(f.position as Position | undefined, position),
    );
    // Of fields sharing one box, the first not yet filled.
    return there.find((f) => !filled.has(f)) ?? there[0];
  };

  const signatures = request.signatures?.map((entry, i) =>
    place(
      entry,
      `signatures[${i}]`,
      entry.type,
      // The recipient's own mark: a signature or initials, of their own upload or their name.
      entry.type === 'signature' || entry.type === 'initials',
    ),
  );
  const images = request.images?.map((entry, i) => place(entry, `images[${i}]`, 'image', false));
  const annotations = request.annotations?.map((entry, i) =>
    place(entry, `annotations[${i}]`, 'text', false),
  );
  return {
    ...request,
    ...(signatures ? { signatures } : {}),
    ...(images ? { images } : {}),
    ...(annotations ? { annotations } : {}),
  };
}

function pagesOf(field: SignatureFieldInput): number[] {
  return Array.isArray(field.pages) && field.pages.length > 0 ? (field.pages as number[]) : [1];
}

function samePages(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((page, i) => page === b[i]);
}

function samePosition(field: Position | undefined, entry: Position): boolean {
  if (!field) return false;
  return (['percentX', 'percentY', 'percentWidth', 'percentHeight'] as const).every(
    (key) => Math.abs(field[key] - entry[key]) <= SAME_PLACE,
  );
}

/** How messages name a field: its `customId` when it has one, else its `fieldId`. */
function nameOf(field: SignatureFieldInput): string {
  return typeof field.customId === 'string' && field.customId !== '' ? field.customId : fieldKey(field);
}
