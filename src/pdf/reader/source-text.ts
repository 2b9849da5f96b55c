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
