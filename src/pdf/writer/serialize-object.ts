import { PdfName, type PdfObject } from '@libpdf/core';
import type { ObjectEncryption } from '../encryption.js';
import { keySpelling, unchangedText, valueSpelling } from '../reader/source-text.js';

/**
 * Writes PDF objects (as @libpdf/core models them) to bytes. Our own writer rather than the
 * library's save, so an incremental update contains exactly the objects we chose and we know the
 * offset of every byte (a signature's /Contents and /ByteRange). In an encrypted document each
 * object's strings and stream data are encrypted with that object's key (`encryption`).
 *
 * What was read from the file and is unchanged is written as it was read (reader/source-text.ts):
 * its numbers, strings and names with their own spelling, an untouched array or dictionary whole,
 * the entries of a dictionary in their order. Rewriting a page to add /Annots changes nothing else
 * in it, not even the text of /MediaBox, which a difference analysis would report as a change.
 *
 * ```ts
 * const bytes = serializeObject(PdfDict.of({ Type: PdfName.of('Annot') }));
 * const encrypted = serializeObject(dict, opened.encryption?.forObject(ref));
 * ```
 */
export function serializeObject(object: PdfObject, encryption?: ObjectEncryption): Uint8Array {
  const chunks: Buffer[] = [];
  write(object, chunks, encryption);
  return new Uint8Array(Buffer.concat(chunks));
}

function write(object: PdfObject, out: Buffer[], encryption: ObjectEncryption | undefined): void {
  // Strings of an encrypted file are encrypted anew with the key of the object written.
  const asRead = unchangedText(object, !encryption);
  if (asRead) {
    out.push(Buffer.from(asRead));
    return;
  }
  switch (object.type) {
    case 'null':
      out.push(Buffer.from('null'));
      return;
    case 'bool':
      out.push(Buffer.from(object.value ? 'true' : 'false'));
      return;
    case 'number':
      out.push(Buffer.from(formatNumber(object.value)));
      return;
    case 'name':
      out.push(Buffer.from(formatName(object.value), 'latin1'));
      return;
    case 'string':
      out.push(
        encryption
          ? formatString(encryption.string(object.bytes), 'hex')
          : formatString(object.bytes, object.format),
      );
      return;
    case 'ref':
      out.push(Buffer.from(`${object.objectNumber} ${object.generation} R`));
      return;
    case 'raw':
      out.push(Buffer.from(object.bytes));
      return;
    case 'array': {
      out.push(Buffer.from('['));
      let index = 0;
      for (const item of object) {
        if (index > 0) out.push(Buffer.from(' '));
        const spelled = item instanceof PdfName ? valueSpelling(object, index, item) : undefined;
        if (spelled) out.push(Buffer.from(spelled));
        else write(item, out, encryption);
        index++;
      }
      out.push(Buffer.from(']'));
      return;
    }
    case 'dict':
    case 'stream': {
      const isStream = object.type === 'stream' && 'data' in object;
      let data = isStream ? (object as { data: Uint8Array }).data : undefined;
      if (data && encryption) {
        const type = object.get('Type');
        data = encryption.stream(data, type instanceof PdfName ? type.value : undefined);
      }
      out.push(Buffer.from('<<'));
      for (const [key, value] of object) {
        if (data && key.value === 'Length') continue;
        const keyText = keySpelling(object, key);
        out.push(
          keyText ? Buffer.from(keyText) : Buffer.from(formatName(key.value), 'latin1'),
          Buffer.from(' '),
        );
        const spelled = value instanceof PdfName ? valueSpelling(object, key, value) : undefined;
        if (spelled) out.push(Buffer.from(spelled));
        else write(value, out, encryption);
        out.push(Buffer.from(' '));
      }
      if (data) out.push(Buffer.from(`/Length ${data.length} `));
      out.push(Buffer.from('>>'));
      if (data) {
        out.push(Buffer.from('\nstream\n'));
        out.push(Buffer.from(data));
        out.push(Buffer.from('\nendstream'));
      }
      return;
    }
  }
}

/**
 * A number computed here (one read from the file keeps its text): integers as is, reals with at
 * most 6 decimals (a millionth of a point), never in exponent form (PDF has no exponents).
 *
 * ```ts
 * formatNumber(1e-7); // '0'
 * formatNumber(595.303937007874); // '595.303937'
 * formatNumber(1e21); // '1000000000000000000000'
 * ```
 */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return '0';
  if (Number.isInteger(value)) return Math.abs(value) < 1e21 ? String(value) : BigInt(value).toString();
  const fixed = value.toFixed(6).replace(/\.?0+$/, '');
  return fixed === '-0' ? '0' : fixed;
}

const NAME_DELIMITERS = new Set('()<>[]{}/%#'.split('').map((c) => c.charCodeAt(0)));

/**
 * A name token, `#xx`-escaping what may not appear raw (ISO 32000-1 7.3.5).
 *
 * ```ts
 * formatName('A B'); // '/A#20B'
 * ```
 */
export function formatName(value: string): string {
  let result = '/';
  for (const byte of Buffer.from(value, 'utf8')) {
    if (byte < 0x21 || byte > 0x7e || NAME_DELIMITERS.has(byte))
      result += `#${byte.toString(16).padStart(2, '0')}`;
    else result += String.fromCharCode(byte);
  }
  return result;
}

function formatString(bytes: Uint8Array, format: 'literal' | 'hex'): Buffer {
  const printable = bytes.every((b) => b >= 0x20 && b < 0x7f);
  if (format === 'hex' || !printable) return Buffer.from(`<${Buffer.from(bytes).toString('hex')}>`);
  let text = '(';
  for (const byte of bytes) {
    const ch = String.fromCharCode(byte);
    text += ch === '(' || ch === ')' || ch === '\\' ? `\\${ch}` : ch;
  }
  return Buffer.from(`${text})`, 'latin1');
}
