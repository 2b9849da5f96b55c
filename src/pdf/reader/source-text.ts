import { PdfArray, PdfDict, PdfNumber, PdfString, type PdfName, type PdfObject } from '@libpdf/core';

/**
 * The text an object had in the file it was read from, kept beside the object model so that writing
 * an object again writes what it does not change exactly as it was: a number keeps its spelling
 * (`595.303937007874`, `1.0`, `-.5`), a string its form (literal or hex, its escapes), a name its
 * `#xx` escapes, an untouched array or dictionary its whole text. A difference analysis of a later
 * revision (pyHanko's, Adobe's) compares values, and a rounded /MediaBox is a changed page: the
 * earlier signatures of the file would no longer hold. The reader (pdf-syntax.ts) records, the
 * writer (serialize-object.ts) asks; a value changed since it was read is written from its value.
 *
 * ```ts
 * recordText(number, bytes.subarray(start, end));
 * const text = unchangedText(number); // the bytes read, or undefined once number.value changed
 * ```
 */
const texts = new WeakMap<object, Uint8Array>();
/** A string's bytes as read: the string is unchanged while it holds the same bytes. */
const stringBytes = new WeakMap<PdfString, Uint8Array>();
/** Names spelled otherwise than the writer would spell them: values by key or index, keys by key. */
const valueSpellings = new WeakMap<PdfDict | PdfArray, Map<PdfName | number, Spelling>>();
const keySpellings = new WeakMap<PdfDict, Map<PdfName, Uint8Array>>();

interface Spelling {
  name: PdfName;
  text: Uint8Array;
}

/** Records the text a number, string, array or dictionary was read from. */
export function recordText(object: PdfObject, text: Uint8Array): void {
  texts.set(object, text);
  if (object instanceof PdfString) stringBytes.set(object, object.bytes);
}

/**
 * Records how the name `name` was spelled as a value in a dictionary (under its key) or an array
 * (at its index), when it is not how the writer would spell it.
 */
export function recordValueSpelling(
  container: PdfDict | PdfArray,
  at: PdfName | number,
  name: PdfName,
  text: Uint8Array,
): void {
  let spellings = valueSpellings.get(container);
  if (!spellings) valueSpellings.set(container, (spellings = new Map<PdfName | number, Spelling>()));
  spellings.set(at, { name, text });
}

/** Records how a dictionary's key was spelled, when it is not how the writer would spell it. */
export function recordKeySpelling(dict: PdfDict, key: PdfName, text: Uint8Array): void {
  let spellings = keySpellings.get(dict);
  if (!spellings) keySpellings.set(dict, (spellings = new Map<PdfName, Uint8Array>()));
  spellings.set(key, text);
}

/** The spelling read for the value `name` in `container` (under a key or at an index), if unusual. */
export function valueSpelling(
  container: PdfDict | PdfArray,
  at: PdfName | number,
  name: PdfName,
): Uint8Array | undefined {
  const spelling = valueSpellings.get(container)?.get(at);
  return spelling && spelling.name === name ? spelling.text : undefined;
}

/** The spelling read for a dictionary's key, if unusual. */
export function keySpelling(dict: PdfDict, key: PdfName): Uint8Array | undefined {
  return keySpellings.get(dict)?.get(key);
}

/**
 * The text `object` was read from when its value is still what was read (for an array or a
 * dictionary: nothing in it changed, down to its direct children's children), else undefined.
 * `withStrings: false` (an encrypted file, whose strings are written encrypted anew) leaves out
 * strings and anything containing them.
 */
export function unchangedText(object: PdfObject, withStrings = true): Uint8Array | undefined {
  const text = texts.get(object);
  if (text === undefined || !unchanged(object, withStrings)) return undefined;
  return text;
}

function unchanged(object: PdfObject, withStrings: boolean): boolean {
  if (object instanceof PdfNumber) {
    const text = texts.get(object);
    return text !== undefined && Number(Buffer.from(text).toString('latin1')) === object.value;
  }
  if (object instanceof PdfString) {
    const read = stringBytes.get(object);
    const form = texts.get(object)?.[0] === 0x28 ? 'literal' : 'hex';
    return (
      withStrings &&
      read !== undefined &&
      object.format === form &&
      (object.bytes === read || Buffer.from(read).equals(object.bytes))
    );
  }
  if (object instanceof PdfArray || object instanceof PdfDict) {
    if (object.dirty || !texts.has(object) || object.type === 'stream') return false;
    for (const item of object instanceof PdfDict ? [...object].map(([, value]) => value) : object)
      if (!unchanged(item, withStrings)) return false;
    return true;
  }
  // Names, references, booleans and null cannot change in place.
  return true;
}

/**
 * Gives `target` (an object as @libpdf/core's full parse read it, and changed) the source text of
 * `read` (the same object as the lazy reader read it) wherever the two hold the same value: what the
 * engine path rewrites keeps its text as the lazy path's does. Whether the two are equal throughout.
 */
export function adoptText(target: PdfObject, read: PdfObject): boolean {
  if (target === read) return true;
  if (target instanceof PdfNumber) {
    const text = texts.get(read);
    const equal = read instanceof PdfNumber && read.value === target.value;
    if (equal && text) texts.set(target, text);
    return equal;
  }
  if (target instanceof PdfString) {
    const text = texts.get(read);
    const equal =
      read instanceof PdfString &&
      read.format === target.format &&
      Buffer.from(read.bytes).equals(target.bytes);
    if (equal && text) recordText(target, text);
    return equal;
  }
  if (target instanceof PdfArray) {
    if (!(read instanceof PdfArray)) return false;
    let equal = read.length === target.length;
    for (let i = 0; i < Math.min(read.length, target.length); i++) {
      const item = target.at(i)!;
      const readItem = read.at(i)!;
      if (!adoptText(item, readItem)) equal = false;
      const spelled = item.type === 'name' ? valueSpelling(read, i, readItem as PdfName) : undefined;
      if (spelled && readItem === item) recordValueSpelling(target, i, item as PdfName, spelled);
    }
    const text = texts.get(read);
    if (equal && text && !target.dirty) texts.set(target, text);
    return equal;
  }
  if (target instanceof PdfDict) {
    if (!(read instanceof PdfDict)) return false;
    let equal = read.size === target.size && target.type === read.type;
    for (const [key, value] of target) {
      const readValue = read.get(key);
      if (readValue === undefined) {
        equal = false;
        continue;
      }
      if (!adoptText(value, readValue)) equal = false;
      const keyText = keySpelling(read, key);
      if (keyText) recordKeySpelling(target, key, keyText);
      const spelled = value.type === 'name' ? valueSpelling(read, key, readValue as PdfName) : undefined;
      if (spelled && readValue === value) recordValueSpelling(target, key, value as PdfName, spelled);
    }
    const text = texts.get(read);
    if (equal && text && !target.dirty && target.type === 'dict') texts.set(target, text);
    return equal;
  }
  // Names are interned; references, booleans and null compare by value.
  if (target.type === 'ref' && read.type === 'ref')
    return target.objectNumber === read.objectNumber && target.generation === read.generation;
  if (target.type === 'bool' && read.type === 'bool') return target.value === read.value;
  return target.type === read.type && target.type === 'null';
}
