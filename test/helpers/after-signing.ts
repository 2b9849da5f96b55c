import { PdfDict, PdfStream } from '@libpdf/core';
import { annotatePdf } from '../../src/pdf/annotate-pdf.js';
import { updatePdf } from '../../src/pdf/appendable-pdf.js';
import { memorySource } from '../../src/pdf/reader/byte-source.js';
import type { TextAnnotation } from '../../src/pdf/visuals/visual-types.js';
import { IncrementalUpdate, wholeFile } from '../../src/pdf/writer/incremental-writer.js';

/** Changes made to a signed file after signing, written by code (issue 38's reproductions). */

/** The incremental saving attack: an update that gives page 1 a new content stream. */
export async function replacePageContent(pdf: Uint8Array, text: string): Promise<Uint8Array> {
  return updatePdf(memorySource(pdf), (opened) => {
    const update = new IncrementalUpdate(opened);
    const { ref, dict } = opened.page(0);
    const content = new PdfStream(
      new PdfDict(),
      new Uint8Array(Buffer.from(`BT /F1 14 Tf 72 720 Td (${text}) Tj ET`)),
    );
    const page = new PdfDict(dict);
    page.set('Contents', update.add(content));
    update.set(ref, page);
    return wholeFile(update.write());
  });
}

/** Changes 12 hex digits in the zero padding of the last signature's /Contents. */
export function tamperPadding(pdf: Uint8Array, gapEnd: number): Uint8Array {
  const tampered = new Uint8Array(pdf);
  // The padding is the end of the hex string, just before '>'.
  for (let i = 0; i < 12; i++) tampered[gapEnd - 2 - 20 - i] = 0x41;
  return tampered;
}

/** One text annotation on page 1 at `position` (PUT /documents/annotate's update), with any `more` of its fields. */
export function annotatePageOne(
  pdf: Uint8Array,
  text: string,
  position: TextAnnotation['position'],
  more: Partial<TextAnnotation> = {},
): Promise<Uint8Array> {
  return annotatePdf({ pdf, annotations: [{ text, pages: [1], position, ...more }] });
}
