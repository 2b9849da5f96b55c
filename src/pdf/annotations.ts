import { PdfArray, PdfRef, PdfString } from '@libpdf/core';
import type { AppendablePdf } from './appendable-pdf.js';
import type { PageGeometries } from './geometry.js';
import type { IncrementalUpdate } from './writer/incremental-writer.js';

/**
 * Adds annotation references to pages' /Annots in an update: the page dictionary gets a new version
 * when /Annots is direct (or absent), the array object does when it is indirect.
 *
 * ```ts
 * appendPageAnnotations({ opened, update, pages, additions: new Map([[0, [annotRef]]]) });
 * ```
 */
export function appendPageAnnotations(options: {
  opened: AppendablePdf;
  update: IncrementalUpdate;
  pages: PageGeometries;
  additions: Map<number, PdfRef[]>;
}): void {
  const { opened, update } = options;
  for (const [pageIndex, refs] of options.additions) {
    if (refs.length === 0) continue;
    const page = options.pages.at(pageIndex);
    const current = page.dict.get('Annots');
    if (current instanceof PdfRef) {
      const array = opened.resolve(current);
      if (array instanceof PdfArray) {
        array.push(...refs);
        update.set(current, array);
        continue;
      }
    }
    const annots = current instanceof PdfArray ? current : new PdfArray();
    annots.push(...refs);
    page.dict.set('Annots', annots);
    update.set(page.ref, page.dict);
  }
}

/**
 * A PDF date string `D:YYYYMMDDHHmmSSZ` (ISO 32000-1 7.9.4), in UTC.
 *
 * ```ts
 * signatureDict.set('M', pdfDate(signingTime));
 * ```
 */
export function pdfDate(date: Date): PdfString {
  const iso = date.toISOString();
  const compact = iso.slice(0, 19).replace(/[-:T]/g, '');
  return PdfString.fromString(`D:${compact}Z`);
}

/**
 * Parses a PDF date string (any offset form) to a Date, or undefined.
 *
 * ```ts
 * parsePdfDate("D:20250102030405+01'00'"); // 2025-01-02T02:04:05Z
 * ```
 */
export function parsePdfDate(text: string): Date | undefined {
  const m = /^D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?([Z+-])?(\d{2})?'?(\d{2})?'?/.exec(
    text.trim(),
  );
  if (!m) return undefined;
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', sign, oh = '00', om = '00'] = m;
  const utc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  const offset = (Number(oh) * 60 + Number(om)) * 60_000;
  return new Date(sign === '+' ? utc - offset : sign === '-' ? utc + offset : utc);
}

/**
 * A fresh `/NM` annotation name.
 *
 * ```ts
 * annotation.set('NM', annotationName('signery'));
 * ```
 */
export function annotationName(prefix: string): PdfString {
  return PdfString.fromString(
    `${prefix}-${Math.random().toString(36).slice(2, 10)}${Date.now().toString(36)}`,
  );
}
