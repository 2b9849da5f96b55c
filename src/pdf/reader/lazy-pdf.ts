import {
  PdfArray,
  PdfDict,
  PdfName,
  PdfNumber,
  PdfRef,
  PdfStream,
  PdfString,
  type PdfObject,
} from '@libpdf/core';
import type { AppendablePdf } from '../appendable-pdf.js';
import type { DocumentEncryption } from '../encryption.js';
import { damagedPdf, PdfEncrypted, PdfInvalid, XREF_DAMAGE } from '../errors.js';
import { assertPageCount, PDF_LIMITS } from '../pdf-limits.js';
import type { XrefEntry } from '../writer/cross-reference.js';
import type { ByteSource } from './byte-source.js';
import { PdfSyntax, PdfSyntaxError } from './pdf-syntax.js';
import {
  CrossReferenceBroken,
  CrossReferenceNotFound,
  endsWithEofMarker,
  findStartxref,
  parseGrowing,
  readCrossReference,
  streamDataStart,
  streamObject,
  type CrossReference,
} from './read-cross-reference.js';
import { StandardSecurity } from './standard-security.js';
import { decodeStreamData, NotReadableLazily, StreamBudget } from './stream-data.js';

const EDGE = 1024;
/** Deeper page trees than this are refused (a hostile file could nest them without end). */
const MAX_TREE_DEPTH = 64;

/** An object stream, decoded once: where each of its objects starts. */
interface ObjectStream {
  data: Uint8Array;
  offsets: Map<number, number>;
}

/**
 * A PDF read on demand (the lazy reader): the end of the file, its cross-reference data, and then
 * only the objects asked for, each parsed once where the cross-reference data says it is, from its
 * object stream when it is packed in one (ISO 32000-1 7.5.7), decrypted when the file is encrypted
 * with an empty user password. Signing needs the trailer, the catalog, the AcroForm and the path
 * down the page tree to the pages it annotates: what a 300-page or a 1 GB file costs is then what a
 * 1-page file costs.
 *
 * What opening checks, as the full parse (open-pdf.ts) does: a PDF header, the end-of-file marker,
 * a `startxref` that points to a cross-reference section, sections that read, a catalog, a page tree
 * with 1 to `PDF_LIMITS.pages` pages, and the empty password. Damage is found where it is read: an
 * object that is not where its cross-reference entry says (the shifted offsets of issue 23) is
 * `PdfInvalid` naming the damage. Damage in parts a signature never reads goes unnoticed here, as it
 * does in viewers (files up to 32 MiB are read whole at upload, and repaired there). The decoded
 * size of the file's streams is not measured either: the reader decodes only the structural streams
 * it needs, each within `PDF_LIMITS.streamBytes`.
 *
 * ```ts
 * const pdf = LazyPdf.open(memorySource(bytes));
 * const catalog = pdf.resolve(pdf.trailer.root);
 * const { ref, dict } = pdf.page(0);
 * ```
 */
export class LazyPdf implements AppendablePdf {
  readonly source: ByteSource;
  readonly startxref: number;
  readonly xrefIsStream: boolean;
  readonly trailer: { size: number; root: PdfRef; info?: PdfRef; id?: Uint8Array };
  readonly encryption?: DocumentEncryption;
  readonly mayAnnotate: boolean;
  readonly pageCount: number;
  readonly #entries: Map<number, XrefEntry>;
  readonly #objects = new Map<number, PdfObject | undefined>();
  readonly #objectStreams = new Map<number, ObjectStream>();
  readonly #pages = new Map<number, { ref: PdfRef; dict: PdfDict }>();
  #security?: StandardSecurity;

  /** What this reading may still decode (shared with the readers of the file's earlier revisions). */
  readonly budget: StreamBudget;

  private constructor(source: ByteSource, xref: CrossReference, budget: StreamBudget) {
    this.source = source;
    this.budget = budget;
    this.startxref = xref.startxref;
    this.xrefIsStream = xref.xrefIsStream;
    this.#entries = xref.entries;
    const { trailer } = xref;
    const root = trailer.get('Root');
    if (!(root instanceof PdfRef)) throw new PdfInvalid('The PDF has no catalog');
    const info = trailer.get('Info');
    const ids = trailer.get('ID');
    const firstId = ids instanceof PdfArray ? ids.at(0) : undefined;
    const size = trailer.get('Size');
    this.trailer = {
      size: Math.max(size instanceof PdfNumber ? size.value : 0, Math.max(0, ...xref.entries.keys()) + 1),
      root,
      ...(info instanceof PdfRef ? { info } : {}),
      ...(firstId instanceof PdfString ? { id: firstId.bytes } : {}),
    };
    const encrypt = trailer.get('Encrypt');
    if (encrypt !== undefined) {
      // The encryption dictionary itself is never encrypted: read before the security is set.
      const dict = this.resolve(encrypt);
      if (!(dict instanceof PdfDict) || !(encrypt instanceof PdfRef || encrypt instanceof PdfDict))
        throw new PdfEncrypted();
      const security = StandardSecurity.open(dict, this.trailer.id ?? new Uint8Array());
      if (!security) throw new PdfEncrypted();
      this.#security = security;
      this.encryption = {
        entry: encrypt,
        forObject: (ref) => ({
          string: (bytes) => security.string('encrypt', bytes, ref),
          stream: (data, type) => security.stream('encrypt', data, type, ref),
        }),
      };
    }
    // Table 22 bit 6: add or modify annotations, fill in form fields; the owner may do anything.
    this.mayAnnotate = !this.#security || this.#security.isOwner || (this.#security.permissions & 32) !== 0;
    if (!(this.resolve(root) instanceof PdfDict)) throw new PdfInvalid('The PDF has no catalog');
    this.pageCount = this.#countPages();
  }

  /**
   * Opens a file for signing: see the class. Throws `PdfInvalid` (not a PDF, truncated, damaged, no
   * catalog or pages), `PdfEncrypted`, `PdfTooLarge` (pages), or `NotReadableLazily` for what only
   * the full parse reads. Streams decoded on the way count against `budget`.
   */
  static open(source: ByteSource, budget = new StreamBudget()): LazyPdf {
    const head = Buffer.from(source.read(0, EDGE)).toString('latin1');
    if (!head.includes('%PDF-')) throw new PdfInvalid('The file is not a PDF');
    if (!endsWithEofMarker(source)) throw new PdfInvalid('The PDF is truncated (no end-of-file marker)');
    const startxref = findStartxref(source);
    if (startxref === undefined) throw damagedPdf(XREF_DAMAGE.startxrefNowhere);
    let xref: CrossReference;
    try {
      xref = readCrossReference(source, startxref, budget);
    } catch (error) {
      if (error instanceof CrossReferenceNotFound) throw damagedPdf(XREF_DAMAGE.startxrefNowhere);
      if (error instanceof CrossReferenceBroken) throw damagedPdf(XREF_DAMAGE.xrefBroken);
      throw error;
    }
    return new LazyPdf(source, xref, budget);
  }

  /**
   * A stream's data through its filters (Flate, with or without a PNG predictor), counted against
   * the reading's budget; `NotReadableLazily` for another filter.
   */
  decode(stream: PdfStream): Uint8Array {
    return decodeStreamData(stream, stream.data, (item) => this.resolve(item), this.budget);
  }

  /** Dereferences an object (follows a PdfRef); undefined for what is not there. */
  resolve(object: PdfObject | undefined): PdfObject | undefined {
    return object instanceof PdfRef ? this.getObject(object) : object;
  }

  getObject(ref: PdfRef): PdfObject | undefined {
    const number = ref.objectNumber;
    if (this.#objects.has(number)) return this.#objects.get(number);
    // Marked first: a stream whose /Length refers to itself reads as missing, not without end.
    this.#objects.set(number, undefined);
    const object = this.#read(number);
    this.#objects.set(number, object);
    return object;
  }

  /** The page at a 0-based index, found down the page tree by the /Count of its nodes (7.7.3.2). */
  page(index: number): { ref: PdfRef; dict: PdfDict } {
    const cached = this.#pages.get(index);
    if (cached) return cached;
    if (!Number.isInteger(index) || index < 0 || index >= this.pageCount)
      throw new RangeError(`No page ${index + 1} in ${this.pageCount}`);
    let node = this.#pagesRoot();
    let rest = index;
    for (let depth = 0; depth < MAX_TREE_DEPTH; depth++) {
      const kids = this.resolve(node.get('Kids'));
      if (!(kids instanceof PdfArray)) break;
      // A node with as many pages as kids has pages for kids (a node kid counts at least one page,
      // unless it is empty, which no writer needs): the page is the kid at its index, read alone.
      // Flat trees of thousands of pages are common; reading every kid before it would not be lazy.
      const count = this.resolve(node.get('Count'));
      const direct = count instanceof PdfNumber && count.value === kids.length ? kids.at(rest) : undefined;
      const directDict = this.resolve(direct);
      if (direct instanceof PdfRef && directDict instanceof PdfDict && !isPageNode(directDict)) {
        const page = { ref: direct, dict: directDict };
        this.#pages.set(index, page);
        return page;
      }
      let next: PdfDict | undefined;
      for (const kid of kids) {
        const dict = this.resolve(kid);
        if (!(kid instanceof PdfRef) || !(dict instanceof PdfDict)) continue;
        if (!isPageNode(dict)) {
          if (rest === 0) {
            const page = { ref: kid, dict };
            this.#pages.set(index, page);
            return page;
          }
          rest--;
          continue;
        }
        const count = this.resolve(dict.get('Count'));
        if (!(count instanceof PdfNumber)) throw new NotReadableLazily('a page tree node without /Count');
        if (rest < count.value) {
          next = dict;
          break;
        }
        rest -= count.value;
      }
      if (!next) break;
      node = next;
    }
    throw new PdfInvalid('The PDF page tree cannot be read');
  }

  #pagesRoot(): PdfDict {
    const catalog = this.resolve(this.trailer.root);
    const pages = catalog instanceof PdfDict ? this.resolve(catalog.get('Pages')) : undefined;
    if (!(pages instanceof PdfDict)) throw new PdfInvalid('The PDF page tree cannot be read');
    return pages;
  }

  #countPages(): number {
    const count = this.resolve(this.#pagesRoot().get('Count'));
    if (!(count instanceof PdfNumber) || !Number.isInteger(count.value))
      throw new NotReadableLazily('a page tree without /Count');
    if (count.value < 1) throw new PdfInvalid('The PDF has no pages');
    assertPageCount(count.value);
    return count.value;
  }

  #read(number: number): PdfObject | undefined {
    const entry = this.#entries.get(number);
    if (!entry || entry.type === 'free') return undefined;
    try {
      if (entry.type === 'compressed') return this.#readPacked(number, entry.stream);
      return this.#readAt(number, entry.offset);
    } catch (error) {
      if (error instanceof PdfSyntaxError) throw damagedPdf(XREF_DAMAGE.xrefBroken);
      throw error;
    }
  }

  /** An object written at `offset`: `N G obj`, the object, and for a stream its data. */
  #readAt(number: number, offset: number): PdfObject | undefined {
    if (offset <= 0 || offset >= this.source.length) throw damagedPdf(XREF_DAMAGE.xrefBroken);
    const parsed = parseGrowing(this.source, offset, 4096, (syntax) => {
      const header = syntax.objectHeader();
      if (!header || header.number !== number) throw damagedPdf(XREF_DAMAGE.xrefBroken);
      const object = syntax.object();
      const dataStart =
        object instanceof PdfDict && syntax.atKeyword('stream') ? offset + streamDataStart(syntax) : -1;
      return { object, generation: header.generation, dataStart };
    });
    const ref = PdfRef.of(number, parsed.generation);
    if (parsed.dataStart >= 0) return this.#stream(parsed.object as PdfDict, parsed.dataStart, ref);
    return this.#security ? this.#decryptStrings(parsed.object, ref) : parsed.object;
  }

  #stream(dict: PdfDict, dataStart: number, ref: PdfRef): PdfStream {
    const length = this.resolve(dict.get('Length'));
    let data: Uint8Array;
    if (length instanceof PdfNumber && this.#endsAt(dataStart + length.value)) {
      data = this.source.read(dataStart, dataStart + length.value);
    } else {
      data = this.source.read(dataStart, this.#findEndstream(dataStart));
    }
    const security = this.#security;
    if (security) {
      const decrypted = this.#decryptStrings(dict, ref) as PdfDict;
      const type = decrypted.get('Type');
      data = security.stream('decrypt', data, type instanceof PdfName ? type.value : undefined, ref);
      return streamObject(decrypted, data);
    }
    return streamObject(dict, data);
  }

  /** Whether `endstream` follows `at` (after an end of line): the stream's /Length is right. */
  #endsAt(at: number): boolean {
    const after = Buffer.from(this.source.read(at, at + 32)).toString('latin1');
    return /^\s*endstream/.test(after);
  }

  /** Where the data ends when /Length is wrong: before the next `endstream` and its end of line. */
  #findEndstream(dataStart: number): number {
    for (let at = dataStart; at < this.source.length && at - dataStart <= PDF_LIMITS.streamBytes;) {
      const window = Buffer.from(this.source.read(at, at + 1024 * 1024 + 16));
      const found = window.indexOf('endstream');
      if (found >= 0) {
        let end = at + found;
        if (end > dataStart && window[found - 1] === 0x0a) end--;
        if (end > dataStart && window[end - at - 1] === 0x0d) end--;
        return end;
      }
      at += window.length - 16;
      if (window.length <= 16) break;
    }
    throw damagedPdf(XREF_DAMAGE.xrefBroken);
  }

  /** An object packed in an object stream (7.5.7): its strings are not encrypted on their own. */
  #readPacked(number: number, streamNumber: number): PdfObject | undefined {
    const stream = this.#objectStream(streamNumber);
    // Found by number in the stream's own list, which holds even where an entry's index is off.
    const offset = stream.offsets.get(number);
    if (offset === undefined) throw damagedPdf(XREF_DAMAGE.xrefBroken);
    return new PdfSyntax(stream.data, offset, true).object();
  }

  #objectStream(number: number): ObjectStream {
    let stream = this.#objectStreams.get(number);
    if (stream) return stream;
    const entry = this.#entries.get(number);
    if (entry?.type !== 'inUse') throw damagedPdf(XREF_DAMAGE.xrefBroken);
    const object = this.getObject(PdfRef.of(number, entry.generation));
    if (!(object instanceof PdfStream)) throw damagedPdf(XREF_DAMAGE.xrefBroken);
    const data = this.decode(object);
    const count = this.resolve(object.get('N'));
    const first = this.resolve(object.get('First'));
    if (!(count instanceof PdfNumber) || !(first instanceof PdfNumber))
      throw damagedPdf(XREF_DAMAGE.xrefBroken);
    const header = new PdfSyntax(data.subarray(0, first.value), 0, true);
    const offsets = new Map<number, number>();
    for (let i = 0; i < count.value; i++) {
      const objectNumber = header.integer();
      const offset = header.integer();
      if (objectNumber === undefined || offset === undefined) break;
      if (!offsets.has(objectNumber)) offsets.set(objectNumber, first.value + offset);
    }
    stream = { data, offsets };
    this.#objectStreams.set(number, stream);
    return stream;
  }

  /**
   * The object with its strings decrypted (7.6.2), except a signature dictionary's /Contents, which
   * is written in the clear (ISO 32000-2 7.6.2) so that validators read what the byte range leaves out.
   */
  #decryptStrings(object: PdfObject, ref: PdfRef): PdfObject {
    const security = this.#security!;
    const decrypt = (item: PdfObject): PdfObject => {
      if (item instanceof PdfString) {
        try {
          return new PdfString(security.string('decrypt', item.bytes, ref), item.format);
        } catch {
          // Not encrypted after all (a producer that left it clear): kept as written, as viewers do.
          return item;
        }
      }
      if (item instanceof PdfArray) {
        for (let i = 0; i < item.length; i++) item.set(i, decrypt(item.at(i)!));
        item.clearDirty();
      } else if (item instanceof PdfDict) {
        const signature = item.has('ByteRange');
        for (const [key, value] of [...item]) {
          if (!(signature && key.value === 'Contents')) item.set(key, decrypt(value));
        }
        item.clearDirty();
      }
      return item;
    };
    return decrypt(object);
  }
}

/** A page tree node (`/Type /Pages`, or a dictionary with /Kids), as opposed to a page. */
function isPageNode(dict: PdfDict): boolean {
  const type = dict.get('Type');
  return type instanceof PdfName ? type.value === 'Pages' : dict.has('Kids');
}
