/**
 * Hex strings as a PDF writes them (ISO 32000-1 7.3.4.3): digits in either case, white space
 * anywhere between them. A signature's /Contents is one of 32,000 to 64,000 digits, read on every
 * verification, so these read bytes in one pass, without building strings or regular expressions.
 */

/** The value of each byte as a hex digit, -1 for white space (skipped), -2 for anything else. */
const DIGIT = new Int8Array(256).fill(-2);
for (let i = 0; i < 10; i++) DIGIT[0x30 + i] = i;
for (let i = 0; i < 6; i++) {
  DIGIT[0x41 + i] = 10 + i;
  DIGIT[0x61 + i] = 10 + i;
}
for (const space of [0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]) DIGIT[space] = -1;

/**
 * The bytes the digits of `bytes[start, end)` stand for, white space skipped, an odd last digit read
 * as followed by 0; undefined when anything else is there.
 *
 * ```ts
 * const contents = decodeHex(file, gapStart + 1, gapEnd - 1);
 * ```
 */
export function decodeHex(bytes: Uint8Array, start = 0, end = bytes.length): Uint8Array | undefined {
  const out = new Uint8Array((end - start + 1) >> 1);
  let length = 0;
  let high = -1;
  for (let i = start; i < end; i++) {
    const digit = DIGIT[bytes[i]!]!;
    if (digit === -1) continue;
    if (digit === -2) return undefined;
    if (high === -1) high = digit;
    else {
      out[length++] = (high << 4) | digit;
      high = -1;
    }
  }
  if (high !== -1) out[length++] = high << 4;
  return out.subarray(0, length);
}

/**
 * Whether `bytes[start, end)` holds hex digits and white space only, and every digit after the
 * first `digits` is 0 (a signature's /Contents past its DER value: the zero padding).
 *
 * ```ts
 * zeroPaddedHex(file, gapStart + 1, gapEnd - 1, derLength * 2);
 * ```
 */
export function zeroPaddedHex(bytes: Uint8Array, start: number, end: number, digits: number): boolean {
  let seen = 0;
  for (let i = start; i < end; i++) {
    const byte = bytes[i]!;
    const digit = DIGIT[byte]!;
    if (digit === -1) continue;
    if (digit === -2) return false;
    if (seen++ >= digits && byte !== 0x30) return false;
  }
  return true;
}

/** Whether `bytes[start, end)` holds hex digits, spaces and line ends only (what a gap may hold). */
export function isHexRun(bytes: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const byte = bytes[i]!;
    if (DIGIT[byte]! < 0 && byte !== 0x20 && byte !== 0x0a && byte !== 0x0d) return false;
  }
  return true;
}
