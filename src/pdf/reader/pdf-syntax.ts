import {
  PdfArray,
  PdfBool,
  PdfDict,
  PdfName,
  PdfNull,
  PdfNumber,
  PdfRef,
  PdfString,
  type PdfObject,
} from '@libpdf/core';
import { formatName } from '../writer/serialize-object.js';
import { recordKeySpelling, recordText, recordValueSpelling } from './source-text.js';
import { decodeHex } from './hex.js';

/** The bytes are not PDF syntax where an object was expected (ISO 32000-1 7.2, 7.3). */
export class PdfSyntaxError extends Error {
  override name = 'PdfSyntaxError';
}

/**
 * Parsing ran into the end of the bytes at hand, which is not the end of the file: read a larger
 * window and parse again. Objects are read from windows of the file, not from the whole of it.
 */
export class NeedMoreBytes extends Error {
  override name = 'NeedMoreBytes';
}

/** Dictionaries and arrays nested deeper than this are refused (a hostile file could nest without end). */
const MAX_DEPTH = 64;

const WHITESPACE = new Uint8Array(256);
for (const c of [0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]) WHITESPACE[c] = 1;
const DELIMITER = new Uint8Array(256);
for (const c of '()<>[]{}/%') DELIMITER[c.charCodeAt(0)] = 1;

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isRegular = (c: number): boolean => WHITESPACE[c] === 0 && DELIMITER[c] === 0;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A reader of PDF syntax (ISO 32000-1 7.2 and 7.3) over a window of a file's bytes, producing the
 * object model of @libpdf/core (so the rest of the engine works on one model whoever read the file).
 * `complete` says the window reaches the end of the file: running out of bytes is then a syntax
 * error, otherwise `NeedMoreBytes`.
 *
 * ```ts
 * const syntax = new PdfSyntax(window, 0, window.length === source.length);
 * const trailer = syntax.object();
 * ```
 */
export class PdfSyntax {
  readonly bytes: Uint8Array;
  readonly complete: boolean;
  pos: number;
  /** How the last name read was spelled, when not as the writer would spell it (source-text.ts). */
  #unusualName: Uint8Array | undefined;

  constructor(bytes: Uint8Array, pos: number, complete: boolean) {
    this.bytes = bytes;
    this.pos = pos;
    this.complete = complete;
  }

  /** Skips white space and comments. */
  skipSpace(): void {
    const { bytes } = this;
    while (this.pos < bytes.length) {
      const c = bytes[this.pos]!;
      if (WHITESPACE[c]) this.pos++;
      else if (c === 0x25) {
        while (this.pos < bytes.length && bytes[this.pos] !== 0x0a && bytes[this.pos] !== 0x0d) this.pos++;
      } else return;
    }
  }

  /** The byte at the position, running out of the window as the window says. */
  peek(): number {
    if (this.pos >= this.bytes.length) this.outOfBytes();
    return this.bytes[this.pos]!;
  }

  outOfBytes(): never {
    if (this.complete) throw new PdfSyntaxError('Unexpected end of the file');
    throw new NeedMoreBytes();
  }

  /** Whether the next token is the keyword `word` (followed by a delimiter, space or the end). */
  atKeyword(word: string): boolean {
    this.skipSpace();
    const end = this.pos + word.length;
    if (end > this.bytes.length) {
      if (!this.complete) this.outOfBytes();
      return false;
    }
    for (let i = 0; i < word.length; i++) if (this.bytes[this.pos + i] !== word.charCodeAt(i)) return false;
    if (end === this.bytes.length) {
      if (!this.complete) this.outOfBytes();
      return true;
    }
    return !isRegular(this.bytes[end]!);
  }

  /** Consumes the keyword `word`, or throws. */
  expectKeyword(word: string): void {
    if (!this.atKeyword(word)) throw new PdfSyntaxError(`Expected "${word}" at ${this.pos}`);
    this.pos += word.length;
  }

  /** A non-negative integer, or undefined (position unchanged) when there is none. */
  integer(): number | undefined {
    this.skipSpace();
    const start = this.pos;
    let value = 0;
    while (this.pos < this.bytes.length && isDigit(this.bytes[this.pos]!)) {
      value = value * 10 + this.bytes[this.pos]! - 0x30;
      this.pos++;
    }
    if (this.pos === this.bytes.length && !this.complete) this.outOfBytes();
    if (this.pos === start || (this.pos < this.bytes.length && isRegular(this.bytes[this.pos]!))) {
      this.pos = start;
      return undefined;
    }
    return value;
  }

  /** The header `N G obj` of an indirect object, or undefined (position unchanged). */
  objectHeader(): { number: number; generation: number } | undefined {
    const start = this.pos;
    const number = this.integer();
    const generation = number === undefined ? undefined : this.integer();
    if (number === undefined || generation === undefined || !this.atKeyword('obj')) {
      this.pos = start;
      return undefined;
    }
    this.pos += 3;
    return { number, generation };
  }

  /** One object (a reference `N G R` included). */
  object(depth = 0): PdfObject {
    if (depth > MAX_DEPTH) throw new PdfSyntaxError('Objects nested too deeply');
    this.skipSpace();
    const c = this.peek();
    if (c === 0x2f) return this.name();
    const start = this.pos;
    let object: PdfObject | undefined;
    if (c === 0x28) object = this.literalString();
    else if (c === 0x5b) object = this.array(depth);
    else if (c === 0x3c) {
      if (this.pos + 1 >= this.bytes.length) this.outOfBytes();
      object = this.bytes[this.pos + 1] === 0x3c ? this.dictionary(depth) : this.hexString();
    } else if (isDigit(c) || c === 0x2b || c === 0x2d || c === 0x2e) object = this.numberOrReference();
    if (object) {
      // What the object was written as, so that writing it unchanged writes the same bytes.
      if (!(object instanceof PdfRef)) recordText(object, this.bytes.subarray(start, this.pos));
      return object;
    }
    const word = this.keyword();
    if (word === 'true') return PdfBool.of(true);
    if (word === 'false') return PdfBool.of(false);
    if (word === 'null') return PdfNull.instance;
    throw new PdfSyntaxError(`Unexpected "${word.slice(0, 20)}" at ${this.pos - word.length}`);
  }

  /** `<< … >>` */
  dictionary(depth = 0): PdfDict {
    this.pos += 2;
    const entries: [PdfName, PdfObject][] = [];
    let spellings:
      [PdfName, Uint8Array | undefined, PdfName | undefined, Uint8Array | undefined][] | undefined;
    for (;;) {
      this.skipSpace();
      const c = this.peek();
      if (c === 0x3e) {
        if (this.pos + 1 >= this.bytes.length) this.outOfBytes();
        if (this.bytes[this.pos + 1] !== 0x3e) throw new PdfSyntaxError(`Expected ">>" at ${this.pos}`);
        this.pos += 2;
        const dict = new PdfDict(entries);
        dict.clearDirty();
        for (const [key, keyText, value, valueText] of spellings ?? []) {
          if (keyText) recordKeySpelling(dict, key, keyText);
          if (value && valueText) recordValueSpelling(dict, key, value, valueText);
        }
        return dict;
      }
      if (c !== 0x2f) throw new PdfSyntaxError(`Expected a name as dictionary key at ${this.pos}`);
      const key = this.name();
      const keyText = this.#unusualName;
      const value = this.object(depth + 1);
      const valueText = value instanceof PdfName ? this.#unusualName : undefined;
      if (keyText || valueText) (spellings ??= []).push([key, keyText, value as PdfName, valueText]);
      entries.push([key, value]);
    }
  }

  array(depth: number): PdfArray {
    this.pos++;
    const items: PdfObject[] = [];
    let spellings: [number, PdfName, Uint8Array][] | undefined;
    for (;;) {
      this.skipSpace();
      if (this.peek() === 0x5d) {
        this.pos++;
        const array = new PdfArray(items);
        array.clearDirty();
        for (const [index, name, text] of spellings ?? []) recordValueSpelling(array, index, name, text);
        return array;
      }
      const item = this.object(depth + 1);
      if (item instanceof PdfName && this.#unusualName)
        (spellings ??= []).push([items.length, item, this.#unusualName]);
      items.push(item);
    }
  }

  name(): PdfName {
    const { bytes } = this;
    const start = ++this.pos;
    let escaped = false;
    let unusual = false;
    while (this.pos < bytes.length && isRegular(bytes[this.pos]!)) {
      const b = bytes[this.pos]!;
      if (b === 0x23) escaped = true;
      else if (b >= 0x80) unusual = true;
      this.pos++;
    }
    if (this.pos === bytes.length && !this.complete) this.outOfBytes();
    let raw = bytes.subarray(start, this.pos);
    if (escaped) raw = unescapeName(raw);
    const name = PdfName.of(nameText(raw));
    this.#unusualName = undefined;
    if (escaped || unusual) {
      const spelled = bytes.subarray(start - 1, this.pos);
      if (Buffer.from(formatName(name.value), 'latin1').compare(spelled) !== 0) this.#unusualName = spelled;
    }
    return name;
  }

  /** `( … )` with its escapes (7.3.4.2); end-of-line markers inside read as LF. */
  literalString(): PdfString {
    const { bytes } = this;
    const out: number[] = [];
    let depth = 1;
    this.pos++;
    for (;;) {
      if (this.pos >= bytes.length) this.outOfBytes();
      const c = bytes[this.pos++]!;
      if (c === 0x28) depth++;
      else if (c === 0x29 && --depth === 0) break;
      if (c === 0x0d) {
        if (bytes[this.pos] === 0x0a) this.pos++;
        out.push(0x0a);
      } else if (c === 0x5c) this.escape(out);
      else out.push(c);
    }
    return new PdfString(new Uint8Array(out), 'literal');
  }

  #escapes: Record<number, number> = {
    0x6e: 0x0a,
    0x72: 0x0d,
    0x74: 0x09,
    0x62: 0x08,
    0x66: 0x0c,
    0x28: 0x28,
    0x29: 0x29,
    0x5c: 0x5c,
  };

  private escape(out: number[]): void {
    const { bytes } = this;
    if (this.pos >= bytes.length) this.outOfBytes();
    const c = bytes[this.pos++]!;
    const simple = this.#escapes[c];
    if (simple !== undefined) out.push(simple);
    else if (c >= 0x30 && c <= 0x37) {
      let value = c - 0x30;
      for (let n = 1; n < 3 && this.pos < bytes.length; n++) {
        const d = bytes[this.pos]!;
        if (d < 0x30 || d > 0x37) break;
        value = value * 8 + d - 0x30;
        this.pos++;
      }
      out.push(value & 0xff);
    } else if (c === 0x0d) {
      // A backslash at the end of a line continues the string on the next.
      if (bytes[this.pos] === 0x0a) this.pos++;
    } else if (c !== 0x0a) out.push(c);
  }

  hexString(): PdfString {
    const { bytes } = this;
    this.pos++;
    const end = bytes.indexOf(0x3e, this.pos);
    if (end === -1) this.outOfBytes();
    const decoded = decodeHex(bytes, this.pos, end);
    if (!decoded) throw new PdfSyntaxError(`Not a hex string at ${this.pos}`);
    this.pos = end + 1;
    return new PdfString(decoded, 'hex');
  }

  private numberOrReference(): PdfObject {
    const start = this.pos;
    const word = this.keyword();
    const value = Number(word);
    if (!Number.isFinite(value)) {
      // Producers write `--5` and `5.-` now and then; read the leading sign and digits as most readers do.
      const lenient = Number(/^[+-]?\d*\.?\d*/.exec(word.replace(/^([+-])[+-]+/, '$1'))?.[0]);
      if (!Number.isFinite(lenient)) throw new PdfSyntaxError(`Not a number at ${start}`);
      return PdfNumber.of(lenient);
    }
    if (!/^\d+$/.test(word)) return PdfNumber.of(value);
    const afterNumber = this.pos;
    const generation = this.integer();
    if (generation !== undefined && this.atKeyword('R')) {
      this.pos++;
      return PdfRef.of(value, generation);
    }
    this.pos = afterNumber;
    return PdfNumber.of(value);
  }

  /** A run of regular characters. */
  private keyword(): string {
    const { bytes } = this;
    const start = this.pos;
    while (this.pos < bytes.length && isRegular(bytes[this.pos]!)) this.pos++;
    if (this.pos === bytes.length && !this.complete) this.outOfBytes();
    if (this.pos === start) throw new PdfSyntaxError(`Unexpected delimiter at ${start}`);
    return Buffer.from(bytes.buffer, bytes.byteOffset + start, this.pos - start).toString('latin1');
  }
}

function unescapeName(raw: Uint8Array): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    const hex =
      c === 0x23 && i + 2 < raw.length ? Buffer.from(raw.subarray(i + 1, i + 3)).toString('latin1') : '';
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      out.push(parseInt(hex, 16));
      i += 2;
    } else out.push(c);
  }
  return new Uint8Array(out);
}

/** A name's bytes as the text the object model keys on: UTF-8 when they are, else Latin-1. */
function nameText(raw: Uint8Array): string {
  let ascii = true;
  for (const c of raw) if (c >= 0x80) ascii = false;
  if (ascii) return Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString('latin1');
  try {
    return utf8.decode(raw);
  } catch {
    return Buffer.from(raw).toString('latin1');
  }
}
