import { PdfArray, PdfDict, PdfNumber, PdfStream, type PdfObject } from '@libpdf/core';
import { PdfTooLarge } from '../errors.js';
import { PDF_LIMITS } from '../pdf-limits.js';
import type { XrefEntry } from '../writer/cross-reference.js';
import type { ByteSource } from './byte-source.js';
import { NeedMoreBytes, PdfSyntax, PdfSyntaxError } from './pdf-syntax.js';
import { decodeStreamData, NotReadableLazily, StreamBudget } from './stream-data.js';

/** The cross-reference data of a file, every revision merged: where each object is, and the trailer. */
export interface CrossReference {
  /** The newest entry of each object number (a free entry hides older ones). */
  entries: Map<number, XrefEntry>;
  /** The trailers' entries, newer revisions' over older ones'. */
  trailer: PdfDict;
  /** Offset of the newest section: the /Prev of the next update. */
  startxref: number;
  /** The newest section is a cross-reference stream: the next update writes one too. */
  xrefIsStream: boolean;
}

/** The section at `startxref` is not a cross-reference section (a table or a stream). */
export class CrossReferenceNotFound extends Error {
  override name = 'CrossReferenceNotFound';
}

/** A section reached through /Prev or /XRefStm cannot be read. */
export class CrossReferenceBroken extends Error {
  override name = 'CrossReferenceBroken';
}

/** How far from the end of the file `startxref` and `%%EOF` are looked for. */
const EDGE = 1024;

/** Whether the file ends with `%%EOF` (possibly followed by a little whitespace); a cut-off upload does not. */
export function endsWithEofMarker(source: ByteSource): boolean {
  return Buffer.from(source.read(source.length - EDGE, source.length))
    .toString('latin1')
    .includes('%%EOF');
}

/**
 * The offset after the last `startxref`, when it points inside the file at a cross-reference section
 * (a table, or a stream object); undefined when it does not.
 */
export function findStartxref(source: ByteSource): number | undefined {
  const tail = Buffer.from(source.read(source.length - EDGE, source.length)).toString('latin1');
  const match = /startxref\s+(\d+)\s+%%EOF/.exec(tail.slice(tail.lastIndexOf('startxref')));
  const offset = match ? Number(match[1]) : NaN;
  if (!Number.isSafeInteger(offset) || offset <= 0 || offset >= source.length) return undefined;
  const at = Buffer.from(source.read(offset, offset + 32)).toString('latin1');
  return /^(xref|\d+\s+\d+\s+obj)/.test(at) ? offset : undefined;
}

/** More sections than any real file has: a /Prev loop that slipped past the offsets seen, or worse. */
const MAX_SECTIONS = 10_000;

/** The trailer keys of a section that say how to read that section, not the document. */
const SECTION_KEYS = new Set(['Prev', 'XRefStm', 'Type', 'W', 'Index', 'Length', 'Filter', 'DecodeParms']);

/**
 * Reads the cross-reference data from `startxref` back through every revision (ISO 32000-1 7.5.4,
 * 7.5.6, 7.5.8): classic tables, cross-reference streams, and hybrid files whose tables name a stream
 * with /XRefStm (its entries are looked up before the section's /Prev, 7.5.8.4). Linearized files
 * need nothing more: their first-page section points back to the main one with /Prev.
 *
 * ```ts
 * const xref = readCrossReference(source, readStartxref(source));
 * const catalogAt = xref.entries.get(1);
 * ```
 */
export function readCrossReference(
  source: ByteSource,
  startxref: number,
  budget = new StreamBudget(),
): CrossReference {
  const entries = new Map<number, XrefEntry>();
  const trailers: PdfDict[] = [];
  const seen = new Set<number>();
  let xrefIsStream = false;
  for (let offset: number | undefined = startxref, n = 0; offset !== undefined; n++) {
    if (seen.has(offset) || n > MAX_SECTIONS) break;
    seen.add(offset);
    let section: Section;
    try {
      section = readSection(source, offset, budget);
      if (section.hybridStream !== undefined && !seen.has(section.hybridStream)) {
        seen.add(section.hybridStream);
        // The stream's entries stand for the objects the table leaves free (7.5.8.4).
        for (const [number, entry] of readSection(source, section.hybridStream, budget).entries) {
          const listed = section.entries.get(number);
          if (!listed || listed.type === 'free') section.entries.set(number, entry);
        }
      }
    } catch (error) {
      if (!(error instanceof PdfSyntaxError || error instanceof CrossReferenceBroken)) throw error;
      if (offset === startxref) throw new CrossReferenceNotFound(error.message);
      throw new CrossReferenceBroken(error.message);
    }
    if (offset === startxref) xrefIsStream = section.isStream;
    for (const [number, entry] of section.entries) if (!entries.has(number)) entries.set(number, entry);
    trailers.push(section.trailer);
    const prev = section.trailer.get('Prev');
    offset = prev instanceof PdfNumber && prev.value >= 0 ? prev.value : undefined;
  }
  let objects = 0;
  for (const entry of entries.values()) if (entry.type !== 'free') objects++;
  if (objects > PDF_LIMITS.objects) {
    throw new PdfTooLarge(`The PDF has more than ${PDF_LIMITS.objects} objects, the most Signery reads`);
  }
  const trailer = new PdfDict();
  for (const older of trailers.reverse()) {
    for (const [key, value] of older) if (!SECTION_KEYS.has(key.value)) trailer.set(key, value);
  }
  trailer.clearDirty();
  return { entries, trailer, startxref, xrefIsStream };
}

export interface Section {
  entries: Map<number, XrefEntry>;
  trailer: PdfDict;
  isStream: boolean;
  /** /XRefStm of a hybrid file's table. */
  hybridStream?: number;
}

export function readSection(source: ByteSource, offset: number, budget = new StreamBudget()): Section {
  if (offset < 0 || offset >= source.length) throw new PdfSyntaxError(`No section at ${offset}`);
  return parseGrowing(source, offset, 64 * 1024, (syntax) => {
    if (syntax.atKeyword('xref')) return table(syntax);
    const header = syntax.objectHeader();
    if (!header) throw new PdfSyntaxError(`No cross-reference section at ${offset}`);
    return stream(syntax, source, offset, budget);
  });
}

/**
 * Parses from `offset` in a window of `size` bytes, then in larger ones while the parse runs past it
 * (`NeedMoreBytes`). From memory a window is a view; from a file the few kilobytes of an object.
 *
 * ```ts
 * const dict = parseGrowing(source, offset, 4096, (syntax) => syntax.object());
 * ```
 */
export function parseGrowing<T>(
  source: ByteSource,
  offset: number,
  size: number,
  parse: (syntax: PdfSyntax) => T,
): T {
  for (let window = size; ; window *= 4) {
    const end = Math.min(source.length, offset + window);
    try {
      return parse(new PdfSyntax(source.read(offset, end), 0, end === source.length));
    } catch (error) {
      if (!(error instanceof NeedMoreBytes)) throw error;
    }
  }
}

/** A classic table: subsections of 20-byte rows, then `trailer` and its dictionary (7.5.4, 7.5.5). */
function table(syntax: PdfSyntax): Section {
  syntax.expectKeyword('xref');
  const entries = new Map<number, XrefEntry>();
  while (!syntax.atKeyword('trailer')) {
    const first = syntax.integer();
    const count = syntax.integer();
    if (first === undefined || count === undefined)
      throw new PdfSyntaxError('A broken cross-reference table');
    for (let number = first; number < first + count; number++) {
      const offset = syntax.integer();
      const generation = syntax.integer();
      syntax.skipSpace();
      const kind = syntax.peek();
      if (offset === undefined || generation === undefined || (kind !== 0x6e && kind !== 0x66))
        throw new PdfSyntaxError('A broken cross-reference row');
      syntax.pos++;
      // Numbering starts at 0 with the head of the free list; a table starting at 1 whose first
      // row is that head is a common producer mistake, read as readers read it.
      const at = first === 1 && number === 1 && kind === 0x66 && generation === 65535 ? 0 : number;
      if (!entries.has(at)) {
        entries.set(
          at,
          kind === 0x6e
            ? { type: 'inUse', offset, generation }
            : { type: 'free', nextFree: offset, generation },
        );
      }
    }
  }
  syntax.expectKeyword('trailer');
  syntax.skipSpace();
  const trailer = syntax.object();
  if (!(trailer instanceof PdfDict)) throw new PdfSyntaxError('The trailer is not a dictionary');
  const hybrid = trailer.get('XRefStm');
  return {
    entries,
    trailer,
    isStream: false,
    ...(hybrid instanceof PdfNumber ? { hybridStream: hybrid.value } : {}),
  };
}

/** A cross-reference stream (7.5.8): binary rows of /W widths over the subsections of /Index. */
function stream(syntax: PdfSyntax, source: ByteSource, offset: number, budget: StreamBudget): Section {
  syntax.skipSpace();
  if (syntax.peek() !== 0x3c) throw new PdfSyntaxError('A cross-reference stream without a dictionary');
  const dict = syntax.dictionary();
  const length = dict.get('Length');
  if (!(length instanceof PdfNumber))
    throw new NotReadableLazily('an indirect /Length on a cross-reference stream');
  const dataStart = offset + streamDataStart(syntax);
  const data = source.read(dataStart, dataStart + length.value);
  if (data.length !== length.value) throw new PdfSyntaxError('A cross-reference stream cut short');
  const direct = (object: PdfObject | undefined): PdfObject | undefined => object;
  const rows = decodeStreamData(dict, data, direct, budget);
  const widths = numbers(dict.get('W'));
  const size = dict.get('Size');
  const index = numbers(dict.get('Index'));
  if (widths.length < 3 || !(size instanceof PdfNumber))
    throw new PdfSyntaxError('A cross-reference stream without /W or /Size');
  const subsections = index.length >= 2 ? index : [0, size.value];
  const rowLength = widths[0]! + widths[1]! + widths[2]!;
  const entries = new Map<number, XrefEntry>();
  let at = 0;
  for (let s = 0; s + 1 < subsections.length; s += 2) {
    const first = subsections[s]!;
    for (let number = first; number < first + subsections[s + 1]!; number++) {
      if (at + rowLength > rows.length) break;
      const field = (i: number, fallback: number): number => {
        if (widths[i] === 0) return fallback;
        let value = 0;
        for (let b = 0; b < widths[i]!; b++) value = value * 256 + rows[at++]!;
        return value;
      };
      const type = field(0, 1);
      const second = field(1, 0);
      const third = field(2, 0);
      if (entries.has(number)) continue;
      if (type === 0) entries.set(number, { type: 'free', nextFree: second, generation: third });
      else if (type === 1) entries.set(number, { type: 'inUse', offset: second, generation: third });
      else if (type === 2) entries.set(number, { type: 'compressed', stream: second, index: third });
    }
  }
  const trailer = new PdfDict(dict);
  trailer.clearDirty();
  return { entries, trailer, isStream: true };
}

/**
 * After a stream dictionary: the `stream` keyword and its end of line (CRLF or LF, a lone CR read
 * too); answers where the data starts, relative to the window.
 */
export function streamDataStart(syntax: PdfSyntax): number {
  syntax.expectKeyword('stream');
  const { bytes } = syntax;
  if (bytes[syntax.pos] === 0x0d) syntax.pos++;
  if (bytes[syntax.pos] === 0x0a) syntax.pos++;
  return syntax.pos;
}

function numbers(object: PdfObject | undefined): number[] {
  if (!(object instanceof PdfArray)) return [];
  return object.toArray().map((item) => (item instanceof PdfNumber ? item.value : 0));
}

/** A stream object as the object model holds it (its dictionary and its data, still encoded). */
export function streamObject(dict: PdfDict, data: Uint8Array): PdfStream {
  const stream = new PdfStream(dict, data);
  stream.clearDirty();
  return stream;
}
