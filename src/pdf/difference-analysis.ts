import {
  PdfArray,
  PdfBool,
  PdfDict,
  PdfName,
  PdfNumber,
  PdfRef,
  PdfStream,
  PdfString,
  type PdfObject,
} from '@libpdf/core';
import type { AppendablePdf } from './appendable-pdf.js';
import { memorySource } from './reader/byte-source.js';
import { LazyPdf } from './reader/lazy-pdf.js';
import type { PdfSyntax } from './reader/pdf-syntax.js';
import { findStartxref, parseGrowing, readSection, type Section } from './reader/read-cross-reference.js';
import { decodeStreamData, StreamBudget } from './reader/stream-data.js';
import type { XrefEntry } from './writer/cross-reference.js';

/**
 * What a change after a signature is (issue 38): data that keeps the signature verifiable (the DSS,
 * its VRI, document timestamps with their fields), a later signature with its field, widget and
 * appearance, a value filled into an existing field, an annotation, or anything else.
 */
export type ModificationKind = 'validation-data' | 'signature' | 'form-filling' | 'annotation' | 'other';

/** One change a later revision made, as the difference analysis found it. */
export interface Modification {
  /** 1 = the first revision after the signature's own. */
  revision: number;
  kind: ModificationKind;
  /** The object numbers it wrote or freed. */
  objects: number[];
  /** 1-based pages it concerns. */
  pages: number[];
  /** An annotation over text or graphics the signature covered (or that could not be told apart). */
  coversSignedContent?: boolean;
  /** The annotation's rectangle. */
  rect?: number[];
  /** One sentence a person understands. */
  description: string;
}

/** The changes one incremental update made against the revision before it. */
export interface RevisionChanges {
  /** Offset of the revision's `%%EOF`. */
  eof: number;
  changes: Omit<Modification, 'revision'>[];
}

/**
 * The kinds of change the rules allow after a signature (ISO 32000-2 12.8.2.2 with no DocMDP, and
 * pyHanko's default difference-analysis policy): validation data, later signatures with their
 * fields and appearances, form filling, and annotations that cover no signed content.
 */
export function isAllowedAfterSignature(modification: Omit<Modification, 'revision'>): boolean {
  if (modification.kind === 'other') return false;
  if (modification.kind === 'annotation') return modification.coversSignedContent !== true;
  return true;
}

/** Catalog entries a later revision may change (pyHanko's catalog rule). */
const CATALOG_ALLOWED = new Set(['AcroForm', 'DSS', 'Extensions', 'Metadata', 'MarkInfo', 'Version']);
/** AcroForm entries a later signature or form filling may change besides /Fields. */
const ACROFORM_ALLOWED = new Set(['SigFlags', 'NeedAppearances', 'DR', 'DA']);
/** What filling in a field (or signing a signature field) changes on the field and its widget. */
const FILL_KEYS = new Set(['V', 'AP', 'AS', 'MK', 'M']);
const SIGN_KEYS = new Set(['V', 'AP', 'AS', 'MK', 'Lock', 'SV', 'F', 'DA', 'M']);
/** The most pages scanned to name the page an unexplained object belongs to. */
const PAGE_SCAN_LIMIT = 2000;

/**
 * Difference analysis of every incremental update of a file (one entry per revision after the first,
 * oldest first): each revision is compared object by object with the one before it, reading only the
 * objects its cross-reference section names (an update touches a few objects of a 300-page file).
 * Each written or freed object is explained by what it is and what reaches it: the DSS and document
 * timestamps, signature fields with their widgets and appearances, values of existing fields,
 * annotations (compared with the content of their page), or else "other". New objects nothing
 * reaches are harmless and not reported. Revisions that cannot be read (a linearized file's first
 * section) are passed over.
 *
 * ```ts
 * const revisions = analyseRevisions(opened);
 * const after = modificationsAfter(revisions, coverEnd);
 * ```
 */
export function analyseRevisions(opened: AppendablePdf): RevisionChanges[] {
  const bytes = opened.source.read(0, opened.source.length);
  const whole = memorySource(bytes);
  // One budget for the streams the whole reading decodes, the earlier revisions' readers included.
  const budget = opened instanceof LazyPdf ? opened.budget : new StreamBudget();
  const states: RevisionState[] = [];
  /** Each section read once; a revision's entries are the one before's with its own section over them. */
  const sections = new Map<number, Section>();
  let merged = new Map<number, XrefEntry>();
  let trailer: PdfDict | undefined;
  for (const eof of eofOffsets(bytes)) {
    const end = eolAfter(bytes, eof);
    try {
      const source = memorySource(bytes.subarray(0, end));
      const startxref = findStartxref(source);
      if (startxref === undefined) continue;
      // The chain of sections not read yet, newest first (the first revision's may be several).
      const chain: Section[] = [];
      for (let offset: number | undefined = startxref, n = 0; offset !== undefined && n < 10_000; n++) {
        if (sections.has(offset)) break;
        const section = readSection(whole, offset, budget);
        if (section.hybridStream !== undefined) {
          for (const [number, entry] of readSection(whole, section.hybridStream, budget).entries) {
            const listed = section.entries.get(number);
            if (!listed || listed.type === 'free') section.entries.set(number, entry);
          }
        }
        sections.set(offset, section);
        chain.push(section);
        const prev = section.trailer.get('Prev');
        offset = prev instanceof PdfNumber && prev.value >= 0 ? prev.value : undefined;
      }
      if (chain.length === 0) continue;
      const next = new Map(merged);
      let nextTrailer = trailer;
      for (const section of chain.reverse()) {
        for (const [number, entry] of section.entries) next.set(number, entry);
        nextTrailer = section.trailer;
      }
      merged = next;
      trailer = nextTrailer;
      states.push(new RevisionState(bytes.subarray(0, end), eof, merged, trailer!, opened, end, budget));
    } catch {
      // A section that does not read on its own (a linearized file's first page): not a revision.
    }
  }
  const last = states.at(-1);
  if (last) {
    last.final = true;
    for (const state of states) state.latestEntry = (n) => last.entries.get(n);
  }
  const revisions: RevisionChanges[] = [];
  for (let i = 1; i < states.length; i++) {
    revisions.push({ eof: states[i]!.eof, changes: new RevisionDiff(states[i - 1]!, states[i]!).changes() });
  }
  // Bytes after the last revision's end of file that are not one: a viewer may read them, no signature covers them.
  const tail = bytes.subarray(last ? last.end : 0);
  if (last && /\S/.test(Buffer.from(tail.buffer, tail.byteOffset, tail.length).toString('latin1'))) {
    revisions.push({
      eof: bytes.length,
      changes: [
        {
          kind: 'other',
          objects: [],
          pages: [],
          description: "Bytes were added after the end of the file's last revision",
        },
      ],
    });
  }
  return revisions;
}

/** The changes of the revisions after the one a signature's byte range ends in, numbered from 1. */
export function modificationsAfter(revisions: RevisionChanges[], coverEnd: number): Modification[] {
  const after = revisions.filter((revision) => revision.eof >= coverEnd);
  return after.flatMap((revision, i) => revision.changes.map((change) => ({ revision: i + 1, ...change })));
}

/** A revision of the file: its cross-reference entries, and its objects read as they were then. */
class RevisionState {
  final = false;
  #reader?: AppendablePdf;
  readonly root?: PdfRef;
  readonly info?: PdfRef;

  constructor(
    readonly bytes: Uint8Array,
    readonly eof: number,
    readonly entries: Map<number, XrefEntry>,
    trailer: PdfDict,
    readonly whole: AppendablePdf,
    readonly end: number,
    readonly budget: StreamBudget,
  ) {
    const root = trailer.get('Root');
    const info = trailer.get('Info');
    if (root instanceof PdfRef) this.root = root;
    if (info instanceof PdfRef) this.info = info;
  }

  /** Objects unchanged since are read (once) from the whole file; others from this revision's prefix. */
  #readerFor(number: number, open = true): AppendablePdf {
    if (this.final) return this.whole;
    const entry = this.entries.get(number);
    const latest = this.latestEntry(number);
    if (entry && latest && sameEntry(entry, latest)) return this.whole;
    if (!open) return this.#reader ?? (this as unknown as AppendablePdf);
    this.#reader ??= LazyPdf.open(memorySource(this.bytes), this.budget);
    return this.#reader;
  }

  /** A dictionary, array or other non-stream object at `offset`; null for a stream or what does not parse. */
  #readDirect(number: number, offset: number): PdfObject | undefined | null {
    if (offset <= 0 || offset >= this.bytes.length) return null;
    try {
      return parseGrowing(memorySource(this.bytes), offset, 4096, (syntax: PdfSyntax) => {
        const header = syntax.objectHeader();
        if (!header || header.number !== number) return null;
        const object = syntax.object();
        if (object instanceof PdfDict && syntax.atKeyword('stream')) return null;
        return object;
      });
    } catch {
      return null;
    }
  }

  latestEntry: (number: number) => XrefEntry | undefined = () => undefined;

  readonly #direct = new Map<number, PdfObject | undefined>();

  get(number: number): PdfObject | undefined {
    const entry = this.entries.get(number);
    if (!entry || entry.type === 'free') return undefined;
    // An older version of an object, written whole at its offset, is parsed there: opening the
    // revision's prefix as a PDF of its own costs its whole cross-reference chain again.
    if (
      !this.final &&
      entry.type === 'inUse' &&
      !this.whole.encryption &&
      this.#readerFor(number, false) !== this.whole
    ) {
      if (this.#direct.has(number)) return this.#direct.get(number);
      const object = this.#readDirect(number, entry.offset);
      if (object !== null) {
        this.#direct.set(number, object);
        return object;
      }
    }
    try {
      const generation = entry.type === 'inUse' ? entry.generation : 0;
      return this.#readerFor(number).resolve(PdfRef.of(number, generation));
    } catch {
      return undefined;
    }
  }

  resolve(object: PdfObject | undefined): PdfObject | undefined {
    return object instanceof PdfRef ? this.get(object.objectNumber) : object;
  }

  dict(object: PdfObject | undefined): PdfDict | undefined {
    const resolved = this.resolve(object);
    return resolved instanceof PdfDict ? resolved : undefined;
  }

  catalog(): PdfDict | undefined {
    return this.root ? this.dict(this.root) : undefined;
  }

  /** The 1-based number of a page, found up its /Parent chain (kids counted without reading them when /Count says they are pages). */
  pageNumber(ref: PdfRef): number | undefined {
    let node = ref;
    let before = 0;
    for (let depth = 0; depth < 64; depth++) {
      const dict = this.dict(node);
      const parentRef = dict?.get('Parent');
      if (!(parentRef instanceof PdfRef)) return depth === 0 ? undefined : before + 1;
      const parent = this.dict(parentRef);
      const kids = parent ? this.resolve(parent.get('Kids')) : undefined;
      if (!(kids instanceof PdfArray)) return undefined;
      const count = this.resolve(parent!.get('Count'));
      const flat = count instanceof PdfNumber && count.value === kids.length;
      let found = false;
      for (const kid of kids) {
        if (kid instanceof PdfRef && kid.objectNumber === node.objectNumber) {
          found = true;
          break;
        }
        if (flat) before += 1;
        else {
          const kidDict = this.dict(kid);
          const kidCount = kidDict?.get('Count');
          before += kidDict && isPageTreeNode(kidDict) && kidCount instanceof PdfNumber ? kidCount.value : 1;
        }
      }
      if (!found) return undefined;
      node = parentRef;
    }
    return undefined;
  }

  /** The page references in order, at most `limit` of them (for naming pages in unexplained changes). */
  pages(limit: number): PdfRef[] {
    const found: PdfRef[] = [];
    const pagesRoot = this.catalog()?.get('Pages');
    const walk = (ref: PdfObject | undefined, depth: number): void => {
      if (found.length >= limit || depth > 64 || !(ref instanceof PdfRef)) return;
      const dict = this.dict(ref);
      if (!dict) return;
      if (!isPageTreeNode(dict)) {
        found.push(ref);
        return;
      }
      const kids = this.resolve(dict.get('Kids'));
      if (kids instanceof PdfArray) for (const kid of kids) walk(kid, depth + 1);
    };
    walk(pagesRoot, 0);
    return found;
  }
}

interface Group {
  kind: ModificationKind;
  objects: Set<number>;
  pages: Set<number>;
  description: string;
  coversSignedContent?: boolean;
  rect?: number[];
}

/** The changes of one revision against the one before it. */
class RevisionDiff {
  readonly #groups = new Map<string, Group>();
  readonly #assigned = new Map<number, string>();
  /** Object numbers written in this revision that existed before. */
  readonly #modified = new Set<number>();
  /** Object numbers written in this revision that did not exist before. */
  readonly #added = new Set<number>();
  readonly #freed = new Set<number>();
  /** Objects written but harmless (metadata, the Info dictionary, structural streams, the catalog's allowed entries). */
  readonly #harmless = new Set<number>();

  constructor(
    readonly prev: RevisionState,
    readonly cur: RevisionState,
  ) {
    for (const [number, entry] of cur.entries) {
      const before = prev.entries.get(number);
      if (before && sameEntry(before, entry)) continue;
      const wasInUse = before !== undefined && before.type !== 'free';
      if (entry.type === 'free') {
        if (wasInUse) this.#freed.add(number);
      } else if (wasInUse) this.#modified.add(number);
      else this.#added.add(number);
    }
  }

  changes(): Omit<Modification, 'revision'>[] {
    const touched = [...this.#modified, ...this.#added];
    for (const number of touched) {
      const object = this.cur.get(number);
      if (object instanceof PdfStream) {
        const type = object.get('Type');
        if (type instanceof PdfName && (type.value === 'XRef' || type.value === 'ObjStm'))
          this.#harmless.add(number);
      }
    }
    this.#catalog();
    this.#dss();
    this.#acroForm();
    for (const number of this.#modified) if (!this.#known(number)) this.#modifiedObject(number);
    this.#propagate();
    for (const number of this.#freed) {
      this.#assign(number, `freed`, {
        kind: 'other',
        description: 'Objects of the signed document were deleted',
      });
    }
    for (const number of this.#modified) {
      if (this.#known(number)) continue;
      this.#unexplained(number);
    }
    this.#propagate();
    return [...this.#groups.values()].map((group) => ({
      kind: group.kind,
      objects: [...group.objects].sort((a, b) => a - b),
      pages: [...group.pages].sort((a, b) => a - b),
      ...(group.coversSignedContent !== undefined ? { coversSignedContent: group.coversSignedContent } : {}),
      ...(group.rect ? { rect: group.rect } : {}),
      description: group.description,
    }));
  }

  #touched(number: number): boolean {
    return this.#modified.has(number) || this.#added.has(number);
  }

  #known(number: number): boolean {
    return this.#assigned.has(number) || this.#harmless.has(number);
  }

  #group(key: string, init: Omit<Group, 'objects' | 'pages'>): Group {
    let group = this.#groups.get(key);
    if (!group) {
      group = { ...init, objects: new Set(), pages: new Set() };
      this.#groups.set(key, group);
    }
    return group;
  }

  #assign(number: number, key: string, init: Omit<Group, 'objects' | 'pages'>, page?: number): Group {
    const group = this.#group(key, init);
    if (!this.#known(number)) {
      group.objects.add(number);
      this.#assigned.set(number, key);
    }
    if (page !== undefined) group.pages.add(page);
    return group;
  }

  /** Gives the group of `from` every written object it reaches through written objects. */
  #claim(from: PdfObject | undefined, key: string, depth = 0): void {
    if (from === undefined || depth > 32) return;
    if (from instanceof PdfRef) {
      const number = from.objectNumber;
      if (!this.#touched(number) || this.#known(number)) return;
      const group = this.#groups.get(key)!;
      group.objects.add(number);
      this.#assigned.set(number, key);
      this.#claim(this.cur.get(number), key, depth + 1);
      return;
    }
    if (from instanceof PdfArray) for (const item of from) this.#claim(item, key, depth + 1);
    else if (from instanceof PdfDict) {
      for (const [name, value] of from) {
        // A widget's /P and a field's /Parent lead back to what was there before.
        if (name.value === 'P' || name.value === 'Parent') continue;
        this.#claim(value, key, depth + 1);
      }
    }
  }

  /** New objects reached only from objects already explained take their group. */
  #propagate(): void {
    for (const [number, key] of [...this.#assigned]) {
      const object = this.cur.get(number);
      if (object instanceof PdfDict || object instanceof PdfArray) {
        if (object instanceof PdfDict) {
          for (const [name, value] of object) {
            if (name.value === 'P' || name.value === 'Parent') continue;
            this.#claimNew(value, key, 0);
          }
        } else for (const item of object) this.#claimNew(item, key, 0);
      }
    }
  }

  #claimNew(from: PdfObject | undefined, key: string, depth: number): void {
    if (from === undefined || depth > 32) return;
    if (from instanceof PdfRef) {
      if (this.#added.has(from.objectNumber) && !this.#known(from.objectNumber))
        this.#claim(from, key, depth);
      return;
    }
    if (from instanceof PdfArray) for (const item of from) this.#claimNew(item, key, depth + 1);
    else if (from instanceof PdfDict) for (const [, value] of from) this.#claimNew(value, key, depth + 1);
  }

  #catalog(): void {
    const { prev, cur } = this;
    if (!cur.root) return;
    if (!prev.root || prev.root.objectNumber !== cur.root.objectNumber) {
      this.#assign(cur.root.objectNumber, 'catalog', {
        kind: 'other',
        description: 'The document catalog was replaced',
      });
      return;
    }
    const number = cur.root.objectNumber;
    if (cur.info && this.#touched(cur.info.objectNumber)) this.#harmless.add(cur.info.objectNumber);
    const catalog = cur.catalog();
    const metadata = catalog?.get('Metadata');
    if (metadata instanceof PdfRef && this.#touched(metadata.objectNumber))
      this.#harmless.add(metadata.objectNumber);
    if (!this.#touched(number)) return;
    const before = prev.catalog();
    if (!catalog || !before) return;
    const changed = changedKeys(before, catalog, prev, cur).filter((key) => !CATALOG_ALLOWED.has(key));
    if (changed.length === 0) {
      this.#harmless.add(number);
      return;
    }
    const group = this.#assign(number, 'catalog', {
      kind: 'other',
      description: `The document catalog's ${changed.map((key) => `/${key}`).join(', ')} ${changed.length === 1 ? 'was' : 'were'} changed`,
    });
    if (changed.includes('Pages')) group.description = 'The page tree was replaced';
    for (const key of changed) this.#claim(catalog.get(key), 'catalog');
  }

  #dss(): void {
    const dss = this.cur.catalog()?.get('DSS');
    if (dss === undefined) return;
    this.#group('dss', {
      kind: 'validation-data',
      description:
        'Validation data (certificates and revocation answers) was added to the document security store',
    });
    const visit = (object: PdfObject | undefined, depth: number): void => {
      if (object === undefined || depth > 8) return;
      if (object instanceof PdfRef) {
        if (!this.#touched(object.objectNumber)) return;
        this.#claim(object, 'dss', depth);
        return;
      }
      if (object instanceof PdfArray) for (const item of object) visit(item, depth + 1);
      else if (object instanceof PdfDict) for (const [, value] of object) visit(value, depth + 1);
    };
    visit(dss, 0);
    if (
      this.#groups.get('dss')!.objects.size === 0 &&
      !(dss instanceof PdfDict && this.#touched(this.cur.root!.objectNumber))
    )
      this.#groups.delete('dss');
  }

  #acroForm(): void {
    const { prev, cur } = this;
    const formEntry = cur.catalog()?.get('AcroForm');
    const form = cur.dict(formEntry);
    if (!form) return;
    const before = prev.dict(prev.catalog()?.get('AcroForm'));
    const formNumber = formEntry instanceof PdfRef ? formEntry.objectNumber : undefined;
    if (formNumber !== undefined && this.#touched(formNumber) && before) {
      const changed = changedKeys(before, form, prev, cur).filter(
        (key) => key !== 'Fields' && !ACROFORM_ALLOWED.has(key),
      );
      if (changed.length > 0) {
        this.#assign(formNumber, 'acroform', {
          kind: 'other',
          description: `The form's ${changed.map((key) => `/${key}`).join(', ')} ${changed.length === 1 ? 'was' : 'were'} changed`,
        });
      } else this.#harmless.add(formNumber);
    } else if (formNumber !== undefined && this.#touched(formNumber)) this.#harmless.add(formNumber);
    const fieldsEntry = form.get('Fields');
    if (fieldsEntry instanceof PdfRef && this.#touched(fieldsEntry.objectNumber))
      this.#harmless.add(fieldsEntry.objectNumber);
    const fields = refsOf(cur.resolve(fieldsEntry));
    const fieldsBefore = new Set(
      refsOf(before ? prev.resolve(before.get('Fields')) : undefined).map((r) => r.objectNumber),
    );
    const now = new Set(fields.map((ref) => ref.objectNumber));
    for (const gone of fieldsBefore) {
      if (!now.has(gone)) {
        this.#group('fields-removed', { kind: 'other', description: 'A form field was removed' }).objects.add(
          gone,
        );
      }
    }
    for (const ref of fields) {
      if (fieldsBefore.has(ref.objectNumber)) continue;
      this.#newField(ref);
    }
  }

  /** A field added to /Fields: a signature or document timestamp field with its widgets, or another field. */
  #newField(ref: PdfRef): void {
    const field = this.cur.dict(ref);
    if (!field) return;
    const type = fieldType(field, this.cur);
    const key = `field:${ref.objectNumber}`;
    const name = fieldName(field);
    if (type === 'Sig') {
      const value = this.cur.dict(field.get('V'));
      const timestamp = isDocumentTimestamp(value);
      this.#assign(
        ref.objectNumber,
        key,
        timestamp
          ? { kind: 'validation-data', description: 'A document timestamp was added' }
          : {
              kind: 'signature',
              description: value
                ? `A signature${name ? ` (${name})` : ''} was added with its field and appearance`
                : `An empty signature field${name ? ` (${name})` : ''} was added`,
            },
      );
    } else {
      this.#assign(ref.objectNumber, key, {
        kind: 'other',
        description: `A form field${name ? ` (${name})` : ''} was added`,
      });
    }
    this.#claim(field, key);
    for (const widget of widgetsOf(field, this.cur)) {
      const page = widget.dict.get('P');
      if (page instanceof PdfRef) {
        const number = this.cur.pageNumber(page);
        if (number !== undefined) this.#groups.get(key)!.pages.add(number);
      }
    }
  }

  /** An object that existed before and was written again: what it was says what the change is. */
  #modifiedObject(number: number): void {
    const { prev, cur } = this;
    const before = prev.get(number);
    const after = cur.get(number);
    if (before instanceof PdfDict && !(before instanceof PdfStream) && after instanceof PdfDict) {
      if (isPage(before)) return this.#page(number, before, after);
      if (isAnnotation(before)) return this.#existingAnnotation(number, before, after);
      if (isField(before)) return this.#existingField(number, before, after);
    }
    if (before instanceof PdfArray && after instanceof PdfArray) {
      // An /Annots array kept as an object of its own.
      const page = this.#pageWithAnnots(number);
      if (page) return this.#annots(page.number, page.ref, refsOf(before), refsOf(after), number);
    }
  }

  #page(number: number, before: PdfDict, after: PdfDict): void {
    const ref = PdfRef.of(number, 0);
    const page = this.cur.pageNumber(ref) ?? this.prev.pageNumber(ref);
    const changed = changedKeys(before, after, this.prev, this.cur);
    const other = changed.filter((key) => key !== 'Annots');
    if (other.length > 0) {
      const which = page === undefined ? 'A page' : `Page ${page}`;
      const description = other.includes('Contents')
        ? `${which}'s content was replaced`
        : other.includes('Resources')
          ? `${which}'s resources (fonts, images) were changed`
          : `${which}'s ${other.map((key) => `/${key}`).join(', ')} ${other.length === 1 ? 'was' : 'were'} changed`;
      this.#assign(number, `page:${number}`, { kind: 'other', description }, page);
      for (const key of other) this.#claim(after.get(key), `page:${number}`);
    } else this.#harmless.add(number);
    if (changed.includes('Annots')) {
      const annotsBefore = refsOf(this.prev.resolve(before.get('Annots')));
      const annotsAfter = refsOf(this.cur.resolve(after.get('Annots')));
      const entry = after.get('Annots');
      if (entry instanceof PdfRef && this.#touched(entry.objectNumber))
        this.#harmless.add(entry.objectNumber);
      this.#annots(page, ref, annotsBefore, annotsAfter);
    }
  }

  /** Annotations added to or removed from a page's /Annots. */
  #annots(
    page: number | undefined,
    pageRef: PdfRef,
    before: PdfRef[],
    after: PdfRef[],
    arrayNumber?: number,
  ): void {
    if (arrayNumber !== undefined) this.#harmless.add(arrayNumber);
    const had = new Set(before.map((ref) => ref.objectNumber));
    const has = new Set(after.map((ref) => ref.objectNumber));
    for (const ref of before) {
      if (!has.has(ref.objectNumber)) {
        this.#assign(
          ref.objectNumber,
          `annot-removed:${page}`,
          { kind: 'other', description: `An annotation was removed from page ${page ?? '?'}` },
          page,
        );
      }
    }
    for (const ref of after) {
      if (had.has(ref.objectNumber)) continue;
      const existing = this.#assigned.get(ref.objectNumber);
      if (existing) {
        if (page !== undefined) this.#groups.get(existing)!.pages.add(page);
        continue;
      }
      const annotation = this.cur.dict(ref);
      if (!annotation) continue;
      const subtype = annotation.get('Subtype');
      if (subtype instanceof PdfName && subtype.value === 'Widget') {
        const type = fieldType(annotation, this.cur);
        const value = type === 'Sig' ? this.cur.dict(fieldOf(annotation, this.cur)?.get('V')) : undefined;
        const key = `widget:${ref.objectNumber}`;
        this.#assign(
          ref.objectNumber,
          key,
          type === 'Sig'
            ? isDocumentTimestamp(value)
              ? { kind: 'validation-data', description: 'A document timestamp was added' }
              : { kind: 'signature', description: 'A signature widget was added' }
            : { kind: 'other', description: `A form field was added on page ${page ?? '?'}` },
          page,
        );
        this.#claim(annotation, key);
        continue;
      }
      this.#annotation(ref.objectNumber, annotation, pageRef, page, 'added');
    }
  }

  #annotation(
    number: number,
    annotation: PdfDict,
    pageRef: PdfRef,
    page: number | undefined,
    how: string,
  ): void {
    const rect = rectOf(this.cur.resolve(annotation.get('Rect')), this.cur);
    const covers = rect ? coversContent(this.prev, pageRef, rect) : true;
    const subtype = annotation.get('Subtype');
    const kind = subtype instanceof PdfName ? subtype.value : 'unknown';
    const where = page === undefined ? 'a page' : `page ${page}`;
    const key = `annot:${number}`;
    this.#assign(
      number,
      key,
      {
        kind: 'annotation',
        coversSignedContent: covers,
        ...(rect ? { rect } : {}),
        description: covers
          ? `An annotation (${kind}) was ${how} on ${where} over signed text or graphics`
          : `An annotation (${kind}) was ${how} on ${where}, covering no signed content`,
      },
      page,
    );
    this.#claim(annotation, key);
  }

  #existingAnnotation(number: number, before: PdfDict, after: PdfDict): void {
    const changed = changedKeys(before, after, this.prev, this.cur);
    const subtype = before.get('Subtype');
    const pageRef = after.get('P') ?? before.get('P');
    const page = pageRef instanceof PdfRef ? this.cur.pageNumber(pageRef) : undefined;
    if (subtype instanceof PdfName && subtype.value === 'Widget') {
      const type = fieldType(before, this.prev);
      const field = fieldName(fieldOf(after, this.cur) ?? after);
      const allowed = type === 'Sig' ? SIGN_KEYS : FILL_KEYS;
      const key = `fill:${number}`;
      if (changed.every((k) => allowed.has(k))) {
        const value = type === 'Sig' ? this.cur.dict(fieldOf(after, this.cur)?.get('V')) : undefined;
        this.#assign(number, key, fieldFilled(type, value, field), page);
        this.#claim(after, key);
      } else {
        this.#assign(
          number,
          key,
          {
            kind: 'other',
            description: `The form field${field ? ` ${field}` : ''} was changed (${changed.map((k) => `/${k}`).join(', ')})`,
          },
          page,
        );
      }
      return;
    }
    if (pageRef instanceof PdfRef) this.#annotation(number, after, pageRef, page, 'changed');
    else
      this.#assign(number, `annot:${number}`, {
        kind: 'annotation',
        coversSignedContent: true,
        description: 'An annotation was changed',
      });
  }

  #existingField(number: number, before: PdfDict, after: PdfDict): void {
    const changed = changedKeys(before, after, this.prev, this.cur);
    const type = fieldType(before, this.prev);
    const name = fieldName(after);
    const key = `fill:${number}`;
    const allowed = type === 'Sig' ? SIGN_KEYS : FILL_KEYS;
    if (changed.every((k) => allowed.has(k) || k === 'Kids')) {
      const value = type === 'Sig' ? this.cur.dict(after.get('V')) : undefined;
      this.#assign(number, key, fieldFilled(type, value, name));
      this.#claim(after, key);
    } else {
      this.#assign(number, key, {
        kind: 'other',
        description: `The form field${name ? ` ${name}` : ''} was changed (${changed.map((k) => `/${k}`).join(', ')})`,
      });
    }
  }

  /** The page whose /Annots is the array object `number`, if one is found. */
  #pageWithAnnots(number: number): { ref: PdfRef; number: number | undefined } | undefined {
    for (const ref of this.cur.pages(PAGE_SCAN_LIMIT)) {
      const annots = this.cur.dict(ref)?.get('Annots');
      if (annots instanceof PdfRef && annots.objectNumber === number)
        return { ref, number: this.cur.pageNumber(ref) };
    }
    return undefined;
  }

  /** A written object no rule explains: "other", naming the pages whose content or resources use it. */
  #unexplained(number: number): void {
    const before = this.prev.get(number);
    const after = this.cur.get(number);
    if (
      (before instanceof PdfDict && isPageTreeNode(before)) ||
      (after instanceof PdfDict && isPageTreeNode(after))
    ) {
      this.#pageTreeChanged(number);
      return;
    }
    const pages = this.#pagesUsing(number);
    const stream = before instanceof PdfStream;
    const which =
      pages.length === 1 ? `Page ${pages[0]}` : pages.length > 1 ? `Pages ${pages.join(', ')}` : '';
    const description = !which
      ? `An object of the signed document (${stream ? 'a stream' : 'object'} ${number}) was changed`
      : pages.length === 1
        ? `${which}'s content or resources were changed`
        : `${which}' content or resources were changed`;
    const group = this.#assign(number, `object:${number}`, { kind: 'other', description });
    for (const page of pages) group.pages.add(page);
  }

  /**
   * A node of the page tree changed: the pages added (numbered as in the new revision) or removed
   * (numbered as in the signed one), or, when the same pages remain, that their tree was changed.
   */
  #pageTreeChanged(number: number): void {
    const before = this.prev.pages(PAGE_SCAN_LIMIT).map((ref) => ref.objectNumber);
    const after = this.cur.pages(PAGE_SCAN_LIMIT).map((ref) => ref.objectNumber);
    const added = after.flatMap((page, index) => (before.includes(page) ? [] : [index + 1]));
    const removed = before.flatMap((page, index) => (after.includes(page) ? [] : [index + 1]));
    const moved = added.length === 0 && removed.length === 0 && before.join() !== after.join();
    const list = (pages: number[]) => `${pages.length === 1 ? 'Page' : 'Pages'} ${pages.join(', ')}`;
    const sentences = [
      ...(added.length > 0 ? [`${list(added)} ${added.length === 1 ? 'was' : 'were'} added`] : []),
      ...(removed.length > 0
        ? [`${list(removed)} of the signed document ${removed.length === 1 ? 'was' : 'were'} removed`]
        : []),
      ...(moved ? ['The pages were put in another order'] : []),
    ];
    const group = this.#assign(number, `object:${number}`, {
      kind: 'other',
      description: sentences.length > 0 ? sentences.join('; ') : 'The page tree was changed',
    });
    for (const page of [...added, ...removed]) group.pages.add(page);
  }

  /** Pages whose /Contents, or resources one level down, refer to object `number`. */
  #pagesUsing(number: number): number[] {
    const found: number[] = [];
    const refersTo = (object: PdfObject | undefined, depth: number): boolean => {
      if (object instanceof PdfRef) {
        if (object.objectNumber === number) return true;
        return depth < 2 ? refersTo(this.cur.resolve(object), depth + 1) : false;
      }
      if (object instanceof PdfArray) return object.toArray().some((item) => refersTo(item, depth));
      if (object instanceof PdfDict && !(object instanceof PdfStream))
        return [...object].some(([, value]) => refersTo(value, depth + 1));
      return false;
    };
    this.cur.pages(PAGE_SCAN_LIMIT).forEach((ref, index) => {
      const page = this.cur.dict(ref);
      if (page && (refersTo(page.get('Contents'), 1) || refersTo(page.get('Resources'), 0)))
        found.push(index + 1);
    });
    return found;
  }
}

function sameEntry(a: XrefEntry, b: XrefEntry): boolean {
  if (a.type !== b.type) return false;
  if (a.type === 'inUse' && b.type === 'inUse') return a.offset === b.offset && a.generation === b.generation;
  if (a.type === 'compressed' && b.type === 'compressed') return a.stream === b.stream && a.index === b.index;
  return true;
}

/** The keys whose values differ between two dictionaries (indirect values compared by reference). */
function changedKeys(before: PdfDict, after: PdfDict, prev: RevisionState, cur: RevisionState): string[] {
  const keys = new Set<string>();
  for (const [name] of before) keys.add(name.value);
  for (const [name] of after) keys.add(name.value);
  return [...keys].filter((key) => !sameValue(before.get(key), after.get(key), prev, cur, 0));
}

/**
 * Whether two values are the same: direct values compared deeply; references equal when they name the
 * same object. An object a reference names that was written again is judged on its own (every written
 * object is explained by a rule or reported), so a dictionary that only points at it is unchanged: a
 * catalog's /OpenAction naming page 1 did not change because page 1 got a signature widget.
 */
function sameValue(
  a: PdfObject | undefined,
  b: PdfObject | undefined,
  prev: RevisionState,
  cur: RevisionState,
  depth: number,
): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (depth > 16) return false;
  if (a instanceof PdfRef || b instanceof PdfRef) {
    return a instanceof PdfRef && b instanceof PdfRef && a.objectNumber === b.objectNumber;
  }
  if (a instanceof PdfStream || b instanceof PdfStream) {
    if (!(a instanceof PdfStream && b instanceof PdfStream)) return false;
    return bytesSame(a.data, b.data) && sameDict(a, b, prev, cur, depth);
  }
  if (a instanceof PdfDict || b instanceof PdfDict) {
    if (!(a instanceof PdfDict && b instanceof PdfDict)) return false;
    return sameDict(a, b, prev, cur, depth);
  }
  if (a instanceof PdfArray || b instanceof PdfArray) {
    if (!(a instanceof PdfArray && b instanceof PdfArray) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a.at(i), b.at(i), prev, cur, depth + 1)) return false;
    return true;
  }
  if (a instanceof PdfNumber && b instanceof PdfNumber) return a.value === b.value;
  if (a instanceof PdfName && b instanceof PdfName) return a.value === b.value;
  if (a instanceof PdfString && b instanceof PdfString) return bytesSame(a.bytes, b.bytes);
  if (a instanceof PdfBool && b instanceof PdfBool) return a.value === b.value;
  return a.constructor === b.constructor && a.constructor.name === 'PdfNull';
}

function sameDict(a: PdfDict, b: PdfDict, prev: RevisionState, cur: RevisionState, depth: number): boolean {
  if (a.size !== b.size) return false;
  for (const [name, value] of a) if (!sameValue(value, b.get(name), prev, cur, depth + 1)) return false;
  return true;
}

function bytesSame(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);
}

function refsOf(object: PdfObject | undefined): PdfRef[] {
  if (!(object instanceof PdfArray)) return [];
  return object.toArray().filter((item): item is PdfRef => item instanceof PdfRef);
}

function isPageTreeNode(dict: PdfDict): boolean {
  const type = dict.get('Type');
  return type instanceof PdfName ? type.value === 'Pages' : dict.has('Kids');
}

function isPage(dict: PdfDict): boolean {
  const type = dict.get('Type');
  return type instanceof PdfName && type.value === 'Page';
}

function isAnnotation(dict: PdfDict): boolean {
  const type = dict.get('Type');
  return (type instanceof PdfName && type.value === 'Annot') || (dict.has('Subtype') && dict.has('Rect'));
}

function isField(dict: PdfDict): boolean {
  return dict.has('FT') || (dict.has('T') && (dict.has('Kids') || dict.has('V')));
}

/** A widget's or field's field type, inherited through /Parent. */
function fieldType(dict: PdfDict, state: RevisionState): string | undefined {
  let node: PdfDict | undefined = dict;
  for (let depth = 0; node && depth < 32; depth++) {
    const ft = node.get('FT');
    if (ft instanceof PdfName) return ft.value;
    node = state.dict(node.get('Parent'));
  }
  return undefined;
}

/** The field a widget belongs to: itself when merged, else its /Parent. */
function fieldOf(widget: PdfDict, state: RevisionState): PdfDict | undefined {
  if (widget.has('FT') || widget.has('T')) return widget;
  return state.dict(widget.get('Parent'));
}

function fieldName(dict: PdfDict): string | undefined {
  const t = dict.get('T');
  return t instanceof PdfString ? t.asString() : undefined;
}

function widgetsOf(field: PdfDict, state: RevisionState): { dict: PdfDict }[] {
  if (field.has('Subtype')) return [{ dict: field }];
  const kids = state.resolve(field.get('Kids'));
  if (!(kids instanceof PdfArray)) return [];
  return kids
    .toArray()
    .map((kid) => state.dict(kid))
    .filter((kid): kid is PdfDict => kid !== undefined && kid.has('Subtype'))
    .map((dict) => ({ dict }));
}

/** What filling an existing field is: a signature (or a document timestamp) for /Sig, else form filling. */
function fieldFilled(
  type: string | undefined,
  value: PdfDict | undefined,
  name: string | undefined,
): Omit<Group, 'objects' | 'pages'> {
  if (type !== 'Sig')
    return { kind: 'form-filling', description: `The form field${name ? ` ${name}` : ''} was filled in` };
  if (isDocumentTimestamp(value))
    return { kind: 'validation-data', description: 'A document timestamp was added' };
  return { kind: 'signature', description: `The signature field${name ? ` ${name}` : ''} was signed` };
}

function isDocumentTimestamp(value: PdfDict | undefined): boolean {
  if (!value) return false;
  const type = value.get('Type');
  const subFilter = value.get('SubFilter');
  return (
    (type instanceof PdfName && type.value === 'DocTimeStamp') ||
    (subFilter instanceof PdfName && subFilter.value === 'ETSI.RFC3161')
  );
}

function rectOf(object: PdfObject | undefined, state: RevisionState): number[] | undefined {
  if (!(object instanceof PdfArray) || object.length !== 4) return undefined;
  const values = object.toArray().map((item) => state.resolve(item));
  if (!values.every((item) => item instanceof PdfNumber)) return undefined;
  const [x1, y1, x2, y2] = values.map((item) => item.value) as [number, number, number, number];
  return [Math.min(x1, x2), Math.min(y1, y2), Math.max(x1, x2), Math.max(y1, y2)];
}

// ---------------------------------------------------------------------------------------------------
// What a page draws, roughly: boxes of its text runs, painted paths and images, to tell whether an
// annotation lies over signed content. Text widths are estimated (0.6 em a byte), which errs wide.
// ---------------------------------------------------------------------------------------------------

type Box = [number, number, number, number];
type Matrix = [number, number, number, number, number, number];

/** Decoded content larger than this is not measured: the annotation is said to cover it. */
const MAX_CONTENT_BYTES = 8 * 1024 * 1024;

/**
 * Whether `rect` lies over something the page draws in the revision `state` (the signed one). When
 * the content cannot be read or measured, it is said to: the rule is to warn when unsure.
 */
function coversContent(state: RevisionState, pageRef: PdfRef, rect: number[]): boolean {
  const page = state.dict(pageRef);
  if (!page) return true;
  let boxes: Box[] | undefined;
  try {
    boxes = pageContentBoxes(page, state);
  } catch {
    return true;
  }
  if (!boxes) return true;
  // A hairline touching the rectangle's edge (a signature line under a field) is not "covered".
  const [x1, y1, x2, y2] = [rect[0]! + 1, rect[1]! + 1, rect[2]! - 1, rect[3]! - 1];
  if (x2 <= x1 || y2 <= y1) return false;
  return boxes.some(([a, b, c, d]) => a < x2 && c > x1 && b < y2 && d > y1);
}

function pageContentBoxes(page: PdfDict, state: RevisionState): Box[] | undefined {
  const contents = state.resolve(page.get('Contents'));
  const streams: PdfStream[] = [];
  if (contents instanceof PdfStream) streams.push(contents);
  else if (contents instanceof PdfArray) {
    for (const item of contents) {
      const stream = state.resolve(item);
      if (stream instanceof PdfStream) streams.push(stream);
    }
  }
  const parts: Buffer[] = [];
  let size = 0;
  for (const stream of streams) {
    const data = decodeStreamData(stream, stream.data, (item) => state.resolve(item), state.budget);
    size += data.length;
    if (size > MAX_CONTENT_BYTES) return undefined;
    parts.push(Buffer.from(data.buffer, data.byteOffset, data.length), Buffer.from('\n'));
  }
  const resources = state.dict(page.get('Resources'));
  const xobjects = resources ? state.dict(resources.get('XObject')) : undefined;
  return contentBoxes(Buffer.concat(parts).toString('latin1'), (name) => {
    const xobject = xobjects ? state.resolve(xobjects.get(name)) : undefined;
    if (!(xobject instanceof PdfStream)) return undefined;
    const subtype = xobject.get('Subtype');
    if (subtype instanceof PdfName && subtype.value === 'Image') return { bbox: [0, 0, 1, 1] };
    const bbox = rectOf(state.resolve(xobject.get('BBox')), state);
    const matrix = state.resolve(xobject.get('Matrix'));
    const m =
      matrix instanceof PdfArray && matrix.length === 6
        ? (matrix.toArray().map((item) => (item instanceof PdfNumber ? item.value : 0)) as Matrix)
        : undefined;
    return bbox ? { bbox: bbox as Box, ...(m ? { matrix: m } : {}) } : undefined;
  });
}

const IDENTITY: Matrix = [1, 0, 0, 1, 0, 0];

function multiply(m: Matrix, n: Matrix): Matrix {
  return [
    m[0] * n[0] + m[1] * n[2],
    m[0] * n[1] + m[1] * n[3],
    m[2] * n[0] + m[3] * n[2],
    m[2] * n[1] + m[3] * n[3],
    m[4] * n[0] + m[5] * n[2] + n[4],
    m[4] * n[1] + m[5] * n[3] + n[5],
  ];
}

function apply(m: Matrix, x: number, y: number): [number, number] {
  return [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]];
}

function boxOf(m: Matrix, box: Box): Box {
  const points = [
    apply(m, box[0], box[1]),
    apply(m, box[2], box[1]),
    apply(m, box[0], box[3]),
    apply(m, box[2], box[3]),
  ];
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}

const TOKEN =
  /\s+|%[^\r\n]*|\((?:\\[\s\S]|[^\\()]|\((?:\\[\s\S]|[^\\()])*\))*\)|<<|>>|<[0-9A-Fa-f\s]*>|\[|\]|\/[^\s/[\]()<>{}%]*|[+-]?(?:\d+\.?\d*|\.\d+)|[A-Za-z'"*]+[0-9]?|[\s\S]/g;

/** The boxes a content stream paints (text runs, filled or stroked paths, images and forms), in page space. */
export function contentBoxes(
  content: string,
  xobject: (name: string) => { bbox: Box; matrix?: Matrix } | undefined,
): Box[] {
  const boxes: Box[] = [];
  const stack: { ctm: Matrix; fontSize: number; leading: number; scale: number }[] = [];
  let ctm: Matrix = IDENTITY;
  let fontSize = 12;
  let leading = 0;
  let scale = 1;
  let tm: Matrix = IDENTITY;
  let tlm: Matrix = IDENTITY;
  let path: number[] = [];
  let operands: (number | string)[] = [];
  let textLength = 0;
  const point = (x: number, y: number) => path.push(...apply(ctm, x, y));
  const showText = (bytes: number) => {
    const width = bytes * fontSize * 0.6 * scale;
    boxes.push(boxOf(multiply(tm, ctm), [0, -0.3 * fontSize, width, fontSize]));
    tm = multiply([1, 0, 0, 1, width, 0], tm);
  };
  const num = (i: number) => {
    const value = operands[operands.length - i];
    return typeof value === 'number' ? value : 0;
  };
  TOKEN.lastIndex = 0;
  let inArray = false;
  for (let match = TOKEN.exec(content); match; match = TOKEN.exec(content)) {
    const token = match[0];
    const c = token.charCodeAt(0);
    if (c <= 32 || c === 0x25) continue;
    if (token === '[') {
      inArray = true;
      textLength = 0;
      continue;
    }
    if (token === ']') {
      inArray = false;
      operands.push('array');
      continue;
    }
    if (token[0] === '(' || (token[0] === '<' && token !== '<<')) {
      const length = token[0] === '(' ? token.length - 2 : Math.ceil(token.replace(/\s/g, '').length / 2) - 1;
      if (inArray) textLength += Math.max(0, length);
      else operands.push(`string:${Math.max(0, length)}`);
      continue;
    }
    if (inArray) continue;
    if (token[0] === '/' || token === '<<' || token === '>>') {
      operands.push(token);
      continue;
    }
    if (/^[+-]?[\d.]/.test(token)) {
      operands.push(Number(token));
      continue;
    }
    switch (token) {
      case 'q':
        stack.push({ ctm, fontSize, leading, scale });
        break;
      case 'Q': {
        const saved = stack.pop();
        if (saved) ({ ctm, fontSize, leading, scale } = saved);
        break;
      }
      case 'cm':
        ctm = multiply([num(6), num(5), num(4), num(3), num(2), num(1)], ctm);
        break;
      case 'BT':
        tm = IDENTITY;
        tlm = IDENTITY;
        break;
      case 'Tf':
        fontSize = Math.abs(num(1)) || 12;
        break;
      case 'TL':
        leading = num(1);
        break;
      case 'Tz':
        scale = num(1) / 100;
        break;
      case 'Tm':
        tm = tlm = [num(6), num(5), num(4), num(3), num(2), num(1)];
        break;
      case 'Td':
      case 'TD':
        if (token === 'TD') leading = -num(1);
        tm = tlm = multiply([1, 0, 0, 1, num(2), num(1)], tlm);
        break;
      case 'T*':
        tm = tlm = multiply([1, 0, 0, 1, 0, -leading], tlm);
        break;
      case 'Tj':
      case "'":
      case '"': {
        if (token !== 'Tj') tm = tlm = multiply([1, 0, 0, 1, 0, -leading], tlm);
        const last = operands[operands.length - 1];
        showText(typeof last === 'string' && last.startsWith('string:') ? Number(last.slice(7)) : 1);
        break;
      }
      case 'TJ':
        showText(textLength);
        break;
      case 'm':
      case 'l':
        point(num(2), num(1));
        break;
      case 'c':
        point(num(6), num(5));
        point(num(4), num(3));
        point(num(2), num(1));
        break;
      case 'v':
      case 'y':
        point(num(4), num(3));
        point(num(2), num(1));
        break;
      case 're': {
        const [x, y, w, h] = [num(4), num(3), num(2), num(1)];
        point(x, y);
        point(x + w, y + h);
        point(x, y + h);
        point(x + w, y);
        break;
      }
      case 'S':
      case 's':
      case 'f':
      case 'F':
      case 'f*':
      case 'B':
      case 'B*':
      case 'b':
      case 'b*':
        if (path.length >= 2) {
          let [x1, y1, x2, y2] = [Infinity, Infinity, -Infinity, -Infinity];
          for (let i = 0; i + 1 < path.length; i += 2) {
            x1 = Math.min(x1, path[i]!);
            x2 = Math.max(x2, path[i]!);
            y1 = Math.min(y1, path[i + 1]!);
            y2 = Math.max(y2, path[i + 1]!);
          }
          boxes.push([x1, y1, x2, y2]);
        }
        path = [];
        break;
      case 'n':
        path = [];
        break;
      case 'sh':
        boxes.push([-Infinity, -Infinity, Infinity, Infinity]);
        break;
      case 'Do': {
        const name = operands[operands.length - 1];
        const found = typeof name === 'string' && name.startsWith('/') ? xobject(name.slice(1)) : undefined;
        if (!found) boxes.push([-Infinity, -Infinity, Infinity, Infinity]);
        else boxes.push(boxOf(found.matrix ? multiply(found.matrix, ctm) : ctm, found.bbox));
        break;
      }
      case 'BI': {
        // An inline image: its data up to EI, drawn in the unit square.
        const end = content.indexOf('EI', TOKEN.lastIndex);
        TOKEN.lastIndex = end < 0 ? content.length : end + 2;
        boxes.push(boxOf(ctm, [0, 0, 1, 1]));
        break;
      }
      default:
        break;
    }
    operands = [];
  }
  return boxes;
}

/** Offsets of every `%%EOF` (one per revision; linearized files have an extra one up front). */
export function eofOffsets(bytes: Uint8Array): number[] {
  const offsets: number[] = [];
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  for (let at = buffer.indexOf('%%EOF'); at !== -1; at = buffer.indexOf('%%EOF', at + 5)) offsets.push(at);
  return offsets;
}

/** Where the line ending after the `%%EOF` at `eof` ends: the end of that revision. */
export function eolAfter(bytes: Uint8Array, eof: number): number {
  let end = eof + 5;
  while (end < bytes.length && (bytes[end] === 0x0a || bytes[end] === 0x0d)) end++;
  return end;
}
