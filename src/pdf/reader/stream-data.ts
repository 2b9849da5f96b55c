import { constants, inflateSync } from 'node:zlib';
import { PdfArray, PdfDict, PdfName, PdfNumber, type PdfObject } from '@libpdf/core';
import { PdfTooLarge } from '../errors.js';
import { PDF_LIMITS } from '../pdf-limits.js';

/**
 * What the lazy reader meets and leaves to the full parse (a filter it does not decode, say): the
 * operation starts again on @libpdf/core's reading of the whole file (see open-for-update.ts).
 */
export class NotReadableLazily extends Error {
  override name = 'NotReadableLazily';
}

/**
 * What one reading of a file may still decode, all streams together (`PDF_LIMITS.totalStreamBytes`):
 * one per reading, shared by every reader of the file's revisions, so a file of many streams that
 * each stay under the limit of one cannot make a reading inflate without end.
 */
export class StreamBudget {
  left: number = PDF_LIMITS.totalStreamBytes;
}

/**
 * The decoded data of the streams the lazy reader itself reads: cross-reference streams and object
 * streams (ISO 32000-1 7.5.7, 7.5.8). Those are FlateDecode with or without a PNG predictor, or not
 * filtered at all, in every file we have met; anything else is `NotReadableLazily`. Decoding stops
 * past `PDF_LIMITS.streamBytes`, or past what `budget` has left (`PdfTooLarge`): a stream that
 * inflates without end is refused here as the full parse refuses it.
 *
 * ```ts
 * const rows = decodeStreamData(dict, data, resolve, budget);
 * ```
 */
export function decodeStreamData(
  dict: PdfDict,
  data: Uint8Array,
  resolve: (object: PdfObject | undefined) => PdfObject | undefined,
  budget: StreamBudget = new StreamBudget(),
): Uint8Array {
  const filters = listOf(resolve(dict.get('Filter')), resolve);
  const params = listOf(resolve(dict.get('DecodeParms')), resolve);
  let out = data;
  for (const [i, filter] of filters.entries()) {
    if (!(filter instanceof PdfName) || !['FlateDecode', 'Fl'].includes(filter.value)) {
      throw new NotReadableLazily(
        `a ${filter instanceof PdfName ? filter.value : 'strange'} filter on a structural stream`,
      );
    }
    out = inflate(out, budget);
    const parms = params[i];
    if (parms instanceof PdfDict) out = unpredict(out, parms, resolve);
  }
  return out;
}

function listOf(
  object: PdfObject | undefined,
  resolve: (object: PdfObject | undefined) => PdfObject | undefined,
): (PdfObject | undefined)[] {
  if (object === undefined) return [];
  if (object instanceof PdfArray) return object.toArray().map((item) => resolve(item));
  return [object];
}

function inflate(data: Uint8Array, budget: StreamBudget): Uint8Array {
  const whole = budget.left < PDF_LIMITS.streamBytes;
  let out: Uint8Array;
  try {
    // Sync flush: a stream cut short still gives what it holds, as viewers read it.
    out = inflateSync(data, {
      finishFlush: constants.Z_SYNC_FLUSH,
      maxOutputLength: Math.max(1, Math.min(PDF_LIMITS.streamBytes, budget.left)),
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(whole);
    throw error;
  }
  if (out.length > budget.left) throw tooLarge(true);
  budget.left -= out.length;
  return out;
}

function tooLarge(whole: boolean): PdfTooLarge {
  const mib = (whole ? PDF_LIMITS.totalStreamBytes : PDF_LIMITS.streamBytes) / 1024 / 1024;
  return new PdfTooLarge(
    whole
      ? `The PDF's streams decompress to more than ${mib} MiB, the most Signery reads`
      : `A stream of the PDF decompresses to more than ${mib} MiB, the most Signery reads`,
  );
}

/** Undoes a PNG predictor (7.4.4.4, predictors 10–15); predictor 1 is none, TIFF's 2 is left to the full parse. */
function unpredict(
  data: Uint8Array,
  parms: PdfDict,
  resolve: (object: PdfObject | undefined) => PdfObject | undefined,
): Uint8Array {
  const number = (key: string, fallback: number): number => {
    const value = resolve(parms.get(key));
    return value instanceof PdfNumber ? value.value : fallback;
  };
  const predictor = number('Predictor', 1);
  if (predictor === 1) return data;
  if (predictor < 10) throw new NotReadableLazily(`predictor ${predictor} on a structural stream`);
  const bytesPerPixel = Math.max(1, Math.ceil((number('Colors', 1) * number('BitsPerComponent', 8)) / 8));
  const rowLength = Math.ceil(
    (number('Colors', 1) * number('BitsPerComponent', 8) * number('Columns', 1)) / 8,
  );
  const rows = Math.floor(data.length / (rowLength + 1));
  const out = new Uint8Array(rows * rowLength);
  for (let row = 0; row < rows; row++) {
    const type = data[row * (rowLength + 1)]!;
    const input = row * (rowLength + 1) + 1;
    const at = row * rowLength;
    for (let i = 0; i < rowLength; i++) {
      const left = i >= bytesPerPixel ? out[at + i - bytesPerPixel]! : 0;
      const up = row > 0 ? out[at - rowLength + i]! : 0;
      const upLeft = row > 0 && i >= bytesPerPixel ? out[at - rowLength + i - bytesPerPixel]! : 0;
      const raw = data[input + i]!;
      out[at + i] =
        type === 1
          ? raw + left
          : type === 2
            ? raw + up
            : type === 3
              ? raw + ((left + up) >> 1)
              : type === 4
                ? raw + paeth(left, up, upLeft)
                : raw;
    }
  }
  return out;
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}
