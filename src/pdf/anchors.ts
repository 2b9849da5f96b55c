import { RE2JS } from 're2js';
import { LimitExceeded, ValidationError } from '../base/errors.js';
import { pageGeometries, toDisplay, type PageGeometry, type Position } from './geometry.js';
import { openPdf } from './open-pdf.js';

/** spec: Anchor request element. `offset` is Position-shaped and may be negative. */
export interface AnchorRequest {
  id: string;
  text?: string;
  /** A regular expression in RE2 syntax (the API sends it with backslashes escaped in JSON). */
  regexp?: string;
  offset?: Partial<Position>;
}

/** spec: `anchorPositions` element. */
export interface AnchorPosition {
  id: string;
  fields: { page: number; position: Position }[];
}

interface Glyph {
  char: string;
  box: { x: number; y: number; width: number; height: number };
  size: number;
}

/**
 * Finds anchor text and turns each match into a field position (spec: Anchor rules):
 * 1. the offset is measured from the top-left corner of the match's first letter, as the page is
 *    displayed (CropBox, /Rotate honoured; origin top left, fractions of the visible page);
 * 2. positive percentX moves right, positive percentY moves down;
 * 3. every match gives one field, pages are 1-based;
 * 4. values are returned as computed, even outside 0..1.
 * An omitted offset is zero (Contract). The field's size is `offset.percentWidth/percentHeight`
 * when given, else the size of the matched text on the displayed page.
 *
 * Text is read in content-stream order so rotated and vertical text matches too; glyphs that are
 * visibly apart are joined by a space.
 *
 * ```ts
 * const [{ fields }] = await findAnchors({ pdf, anchors: [{ id: 'sig1', text: 'Sign here', offset: { percentY: 0.02 } }] });
 * ```
 */
export async function findAnchors(options: {
  pdf: Uint8Array;
  anchors: AnchorRequest[];
}): Promise<AnchorPosition[]> {
  const patterns = options.anchors.map((anchor, i) => compile(anchor, i));
  const opened = await openPdf({ bytes: options.pdf });
  const pages = pageGeometries(opened);
  const results = options.anchors.map((anchor) => ({
    id: anchor.id,
    fields: [] as AnchorPosition['fields'],
  }));
  // One turn of the event loop per page (text extraction), then one per page and anchor (matching):
  // other requests are answered in between, whatever the document and the patterns.
  const texts: ReturnType<typeof pageText>[] = [];
  let characters = 0;
  for (const page of opened.pdf.getPages()) {
    const text = pageText(page.extractText());
    texts.push(text);
    characters += text.text.length;
    // Checked page by page: extracting the text costs more than searching it, so stop at once.
    if (characters * patterns.length > ANCHOR_LIMITS.searchedCharacters) {
      throw new LimitExceeded(
        `signatureAnchors: searching the PDF's text (${characters} characters so far) for ${patterns.length} anchors is more than the ${ANCHOR_LIMITS.searchedCharacters} characters one request may search`,
      );
    }
    await nextTurn();
  }
  let found = 0;
  for (const [index, { text, glyphs }] of texts.entries()) {
    if (!text) continue;
    for (const [a, matches] of patterns.entries()) {
      for (const match of matches(text)) {
        const matched = glyphs.slice(match.start, match.end).filter((g): g is Glyph => g !== null);
        const first = matched.find((g) => g.char.trim() !== '');
        if (!first) continue;
        if (++found > ANCHOR_LIMITS.matches) {
          throw new LimitExceeded(
            `signatureAnchors: more than ${ANCHOR_LIMITS.matches} matches; narrow the anchors`,
          );
        }
        results[a]!.fields.push({
          page: index + 1,
          position: fieldPosition(pages.at(index), first, matched, options.anchors[a]!.offset ?? {}),
        });
      }
      await nextTurn();
    }
  }
  return results;
}

/**
 * How much anchor work one request may ask for. Matching is linear in the text (RE2), so these bound
 * it whole: at most `anchors` anchors of at most `patternLength` characters each, at most
 * `searchedCharacters` characters searched (the document's text length × the number of anchors), at
 * most `matches` fields in the answer. Over a bound: 400 for the request's shape, 413 for the work.
 */
export const ANCHOR_LIMITS = {
  anchors: 100,
  patternLength: 1_000,
  searchedCharacters: 5_000_000,
  matches: 10_000,
} as const;

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

type Matches = (text: string) => Iterable<{ start: number; end: number }>;

/**
 * An anchor's matcher: `text` is searched as a plain string, `regexp` with RE2 (re2js), whose time
 * is linear in the text whatever the pattern: a user's pattern never runs on a backtracking engine.
 * Empty matches give no field.
 */
function compile(anchor: AnchorRequest, index: number): Matches {
  if (anchor.regexp !== undefined && anchor.regexp !== '') {
    const checked = checkAnchorPattern(anchor.regexp);
    if (typeof checked === 'string') throw new ValidationError(`signatureAnchors[${index}].regexp`, checked);
    return function* (text) {
      const matcher = checked.matcher(text);
      while (matcher.find()) {
        if (matcher.end() > matcher.start()) yield { start: matcher.start(), end: matcher.end() };
      }
    };
  }
  if (anchor.text !== undefined && anchor.text !== '') {
    const needle = anchor.text;
    return function* (text) {
      for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length))
        yield { start: at, end: at + needle.length };
    };
  }
  throw new ValidationError(`signatureAnchors[${index}]`, 'must contain text or regexp');
}

/**
 * Compiles an anchor's `regexp` with RE2, or answers why it cannot be used (the end of a validation
 * message, after the field's name). RE2 has no backreferences or lookaround: a pattern using them is
 * refused rather than run on a backtracking engine.
 */
export function checkAnchorPattern(source: string): RE2JS | string {
  if (source.length > ANCHOR_LIMITS.patternLength)
    return `length must be less than or equal to ${ANCHOR_LIMITS.patternLength} characters long`;
  try {
    return RE2JS.compile(source);
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^error parsing regexp: /, '') : 'invalid';
    return isJavaScriptPattern(source)
      ? `uses syntax the linear-time engine (RE2) does not run: no backreferences or lookaround, \\x{…} instead of \\u… (${reason})`
      : `must be a valid regular expression (${reason})`;
  }
}

/** Only to word the refusal: V8 compiles a pattern without running it, in time linear in its length. */
function isJavaScriptPattern(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}

/** The page's glyphs in content-stream order as a string, with the glyph behind each character. */
function pageText(extracted: {
  lines: {
    spans: { chars: { char: string; bbox: Glyph['box']; fontSize: number; sequenceIndex?: number }[] }[];
  }[];
}): { text: string; glyphs: (Glyph | null)[] } {
  const chars = extracted.lines.flatMap((line) => line.spans.flatMap((span) => span.chars));
  if (chars.every((c) => c.sequenceIndex !== undefined))
    chars.sort((a, b) => a.sequenceIndex! - b.sequenceIndex!);
  let text = '';
  const glyphs: (Glyph | null)[] = [];
  let previous: (typeof chars)[number] | undefined;
  for (const c of chars) {
    if (previous && previous.char.trim() !== '' && c.char.trim() !== '' && apart(previous, c)) {
      text += ' ';
      glyphs.push(null);
    }
    for (let i = 0; i < c.char.length; i++) {
      text += c.char[i];
      glyphs.push({ char: c.char, box: c.bbox, size: c.fontSize });
    }
    previous = c;
  }
  return { text, glyphs };
}

/** Two glyphs whose boxes are further apart than a quarter of the font size are separate words. */
function apart(
  a: { bbox: Glyph['box']; fontSize: number },
  b: { bbox: Glyph['box']; fontSize: number },
): boolean {
  const dx = Math.max(
    0,
    Math.max(a.bbox.x, b.bbox.x) - Math.min(a.bbox.x + a.bbox.width, b.bbox.x + b.bbox.width),
  );
  const dy = Math.max(
    0,
    Math.max(a.bbox.y, b.bbox.y) - Math.min(a.bbox.y + a.bbox.height, b.bbox.y + b.bbox.height),
  );
  return Math.max(dx, dy) > 0.25 * Math.max(a.fontSize, 1);
}

function displayedBox(
  page: PageGeometry,
  boxes: Glyph['box'][],
): { u0: number; v0: number; u1: number; v1: number } {
  let u0 = Infinity;
  let v0 = Infinity;
  let u1 = -Infinity;
  let v1 = -Infinity;
  for (const box of boxes) {
    for (const [x, y] of [
      [box.x, box.y],
      [box.x + box.width, box.y],
      [box.x, box.y + box.height],
      [box.x + box.width, box.y + box.height],
    ] as const) {
      const { u, v } = toDisplay(page, x, y);
      u0 = Math.min(u0, u);
      v0 = Math.min(v0, v);
      u1 = Math.max(u1, u);
      v1 = Math.max(v1, v);
    }
  }
  return { u0, v0, u1, v1 };
}

function fieldPosition(
  page: PageGeometry,
  first: Glyph,
  matched: Glyph[],
  offset: Partial<Position>,
): Position {
  const letter = displayedBox(page, [first.box]);
  const whole = displayedBox(
    page,
    matched.map((g) => g.box),
  );
  const round = (n: number): number => Math.round(n * 1e6) / 1e6;
  return {
    percentX: round(letter.u0 / page.width + (offset.percentX ?? 0)),
    percentY: round(letter.v0 / page.height + (offset.percentY ?? 0)),
    percentWidth: round(offset.percentWidth ?? (whole.u1 - whole.u0) / page.width),
    percentHeight: round(offset.percentHeight ?? (whole.v1 - whole.v0) / page.height),
  };
}
