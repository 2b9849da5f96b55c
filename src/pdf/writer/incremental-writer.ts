import { randomBytes } from 'node:crypto';
import { PdfArray, PdfDict, PdfRef, type PDF, type PdfObject } from '@libpdf/core';
import type { AppendablePdf } from '../appendable-pdf.js';
import { assertChangesAllowed, type ObjectEncryption } from '../encryption.js';
import type { ByteSource } from '../reader/byte-source.js';
import { LazyPdf } from '../reader/lazy-pdf.js';
import { adoptText } from '../reader/source-text.js';
import { crossReferenceSection, type XrefEntry } from './cross-reference.js';
import { serializeObject } from './serialize-object.js';

/** Bytes written as an object's body exactly (a signature dictionary with its placeholders). */
export interface RawBody {
  raw: Uint8Array;
}

/** An update laid out after the file it extends: `base` then `tail`. */
export interface WrittenUpdate {
  /** The file as it was, untouched. */
  base: ByteSource;
  /** The bytes the update appends (a signature's placeholders are filled in here, in place). */
  tail: Buffer;
  /** Absolute offset of each written object's body (just after `N G obj\n`). */
  bodyOffsets: Map<number, number>;
}

/**
 * The updated file in one buffer (the base copied once), for callers that keep files in memory.
 *
 * ```ts
 * const bytes = wholeFile(update.write());
 * ```
 */
export function wholeFile(written: Pick<WrittenUpdate, 'base' | 'tail'>): Uint8Array {
  const { base, tail } = written;
  return new Uint8Array(Buffer.concat([base.read(0, base.length), tail]));
}

/**
 * The low-level incremental writer (pyHanko's split: this knows bytes, not signatures). An update
 * appends new and changed objects, then a cross-reference section of the same kind as the previous
 * one (table or stream) whose trailer points back with /Prev; the original bytes stay untouched, so
 * every earlier signature stays valid (DESIGN: every change to a PDF is an incremental update). In an
 * encrypted document the new objects are encrypted with the document's key, and the trailer keeps its
 * /Encrypt and first /ID (the key depends on them). A document whose permissions forbid annotations
 * and form fields gets no update at all (`PdfRestricted`). What the update is written after is read
 * from `opened.source` only when the caller asks for the whole file (`wholeFile`).
 *
 * ```ts
 * const update = new IncrementalUpdate(opened);
 * const ref = update.add(PdfDict.of({ Type: PdfName.of('Annot') }));
 * update.set(pageRef, pageDict);
 * const bytes = wholeFile(update.write());
 * ```
 */
export class IncrementalUpdate {
  readonly #opened: AppendablePdf;
  readonly #objects = new Map<number, { generation: number; body: PdfObject | RawBody }>();
  #next: number;

  constructor(opened: AppendablePdf) {
    assertChangesAllowed(opened);
    this.#opened = opened;
    this.#next = opened.trailer.size;
  }

  /** How an object written under `ref` is encrypted, for bodies written as raw bytes (none if the file is not). */
  encryptionFor(ref: PdfRef): ObjectEncryption | undefined {
    return this.#opened.encryption?.forObject(ref);
  }

  /** A fresh object number for an object written later with `set`. */
  allocate(): PdfRef {
    return PdfRef.of(this.#next++, 0);
  }

  /** Adds a new object and returns its reference. */
  add(body: PdfObject | RawBody): PdfRef {
    const ref = this.allocate();
    this.set(ref, body);
    return ref;
  }

  /** Writes an object under a reference: a new one, or a new version of an existing one. */
  set(ref: PdfRef, body: PdfObject | RawBody): void {
    this.#objects.set(ref.objectNumber, { generation: ref.generation, body });
    this.#next = Math.max(this.#next, ref.objectNumber + 1);
  }

  /**
   * Takes into this update what the engine itself changed in the document it parsed whole (objects it
   * loaded and modified, objects it created), for the few jobs we leave to it, such as drawing form
   * field appearances. Call it before allocating anything here: the engine numbers its new objects itself.
   */
  includeEngineChanges(engine: PDF): void {
    const registry = engine.context.registry;
    for (const [ref, object] of registry.getLoadedObjects()) {
      if (isDirty(object)) this.set(ref, object);
    }
    for (const [ref, object] of registry.getNewObjects()) {
      const taken = this.#objects.get(ref.objectNumber);
      if (taken && taken.body !== object)
        throw new Error(`Object ${ref.objectNumber} was allocated here before the engine made it`);
      this.set(ref, object);
    }
  }

  /** The object this update writes under `ref` (to add to one it made), if it writes one. */
  get(ref: PdfRef): PdfObject | RawBody | undefined {
    return this.#objects.get(ref.objectNumber)?.body;
  }

  /**
   * The full parse (@libpdf/core) keeps no source text: a new version of an object it read takes the
   * text the lazy reader reads for the values it did not change, so that the engine path rewrites an
   * object as exactly as the lazy path does (reader/source-text.ts). Where the lazy reader cannot read
   * the file or the object, the object is written from its values.
   */
  #adoptSourceText(): void {
    if (this.#opened instanceof LazyPdf) return;
    let lazy: LazyPdf | undefined;
    try {
      lazy = LazyPdf.open(this.#opened.source);
    } catch {
      return;
    }
    for (const [number, { generation, body }] of this.#objects) {
      if ('raw' in body || number >= this.#opened.trailer.size) continue;
      try {
        const read = lazy.getObject(PdfRef.of(number, generation));
        if (read) adoptText(body, read);
      } catch {
        // Not readable lazily: written from its values.
      }
    }
  }

  has(ref: PdfRef): boolean {
    return this.#objects.has(ref.objectNumber);
  }

  write(): WrittenUpdate {
    const base = this.#opened.source;
    const chunks: Buffer[] = [];
    let offset = base.length;
    const push = (chunk: Buffer): void => {
      chunks.push(chunk);
      offset += chunk.length;
    };
    const last = base.read(base.length - 1, base.length)[0];
    if (last !== 0x0a && last !== 0x0d) push(Buffer.from('\n'));

    const entries = new Map<number, XrefEntry>();
    const bodyOffsets = new Map<number, number>();
    this.#adoptSourceText();
    for (const [number, { generation, body }] of [...this.#objects].sort((a, b) => a[0] - b[0])) {
      entries.set(number, { type: 'inUse', offset, generation });
      push(Buffer.from(`${number} ${generation} obj\n`));
      bodyOffsets.set(number, offset);
      const encryption = this.encryptionFor(PdfRef.of(number, generation));
      push(Buffer.from('raw' in body ? body.raw : serializeObject(body, encryption)));
      push(Buffer.from('\nendobj\n'));
    }

    const { trailer, encryption } = this.#opened;
    const firstId = trailer.id ?? randomBytes(16);
    // The second ID changes with every revision (ISO 32000-1 14.4).
    const id = `[<${Buffer.from(firstId).toString('hex')}> <${randomBytes(16).toString('hex')}>]`;
    push(
      crossReferenceSection({
        entries,
        trailer:
          `/Root ${trailer.root.objectNumber} ${trailer.root.generation} R` +
          (trailer.info ? ` /Info ${trailer.info.objectNumber} ${trailer.info.generation} R` : '') +
          (encryption
            ? ` /Encrypt ${Buffer.from(serializeObject(encryption.entry)).toString('latin1')}`
            : '') +
          ` /ID ${id} /Prev ${this.#opened.startxref}`,
        offset,
        size: Math.max(trailer.size, this.#next),
        asStream: this.#opened.xrefIsStream,
      }),
    );
    return { base, tail: Buffer.concat(chunks), bodyOffsets };
  }
}

/** A dictionary or array the engine changed, itself or in a direct child (references are not followed). */
function isDirty(object: PdfObject): boolean {
  if ((object instanceof PdfDict || object instanceof PdfArray) && object.dirty) return true;
  if (object instanceof PdfDict) {
    for (const [, value] of object) if (!(value instanceof PdfRef) && isDirty(value)) return true;
  }
  if (object instanceof PdfArray) {
    for (const item of object) if (!(item instanceof PdfRef) && isDirty(item)) return true;
  }
  return false;
}
