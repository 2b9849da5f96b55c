import { PdfDict, PdfName, Standard14Font } from '@libpdf/core';

/**
 * Text in appearance streams uses the standard Helvetica fonts (never embedded, present in every
 * viewer) with WinAnsiEncoding. Characters outside that encoding show as "?".
 */

export type FontName = 'Helvetica' | 'Helvetica-Bold';

const FONTS: Record<FontName, Standard14Font> = {
  Helvetica: Standard14Font.of('Helvetica'),
  'Helvetica-Bold': Standard14Font.of('Helvetica-Bold'),
};

/**
 * Width of `text` in points.
 *
 * ```ts
 * textWidth('Helvetica', 'Sign here', 10); // ≈ 41
 * ```
 */
export function textWidth(font: FontName, text: string, size: number): number {
  return FONTS[font].widthOfTextAtSize(text, size);
}

/**
 * A font dictionary for an appearance stream's resources.
 *
 * ```ts
 * const ref = update.add(fontDict('Helvetica-Bold'));
 * ```
 */
export function fontDict(font: FontName): PdfDict {
  return PdfDict.of({
    Type: PdfName.of('Font'),
    Subtype: PdfName.of('Type1'),
    BaseFont: PdfName.of(font),
    Encoding: PdfName.of('WinAnsiEncoding'),
  });
}

// WinAnsiEncoding 0x80..0x9F (ISO 32000-1 annex D); the rest of Latin-1 maps to itself.
const WIN_ANSI_HIGH: Record<string, number> = {
  '€': 0x80,
  '‚': 0x82,
  ƒ: 0x83,
  '„': 0x84,
  '…': 0x85,
  '†': 0x86,
  '‡': 0x87,
  ˆ: 0x88,
  '‰': 0x89,
  Š: 0x8a,
  '‹': 0x8b,
  Œ: 0x8c,
  Ž: 0x8e,
  '‘': 0x91,
  '’': 0x92,
  '“': 0x93,
  '”': 0x94,
  '•': 0x95,
  '–': 0x96,
  '—': 0x97,
  '˜': 0x98,
  '™': 0x99,
  š: 0x9a,
  '›': 0x9b,
  œ: 0x9c,
  ž: 0x9e,
  Ÿ: 0x9f,
};

/**
 * `text` as a PDF literal string in WinAnsiEncoding, ready for a `Tj` operator.
 *
 * ```ts
 * pdfTextLiteral('Prix: 5 €'); // '(Prix: 5 \\200)'
 * ```
 */
export function pdfTextLiteral(text: string): string {
  let out = '(';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    let byte: number;
    if (WIN_ANSI_HIGH[ch] !== undefined) byte = WIN_ANSI_HIGH[ch];
    else if ((code >= 0x20 && code < 0x7f) || (code >= 0xa0 && code <= 0xff)) byte = code;
    else byte = 0x3f; // '?'
    if (byte === 0x28 || byte === 0x29 || byte === 0x5c) out += `\\${String.fromCharCode(byte)}`;
    else if (byte < 0x20 || byte > 0x7e) out += `\\${byte.toString(8).padStart(3, '0')}`;
    else out += String.fromCharCode(byte);
  }
  return `${out})`;
}

/**
 * Splits text into lines no wider than `maxWidth` (explicit newlines first, then at spaces; a single
 * word wider than the box is cut).
 *
 * ```ts
 * wrapText({ text: 'Approved by the board', font: 'Helvetica', size: 12, maxWidth: 80 }); // ['Approved by', 'the board']
 * ```
 */
export function wrapText(options: {
  text: string;
  font: FontName;
  size: number;
  maxWidth: number;
}): string[] {
  const { font, size, maxWidth } = options;
  const lines: string[] = [];
  for (const paragraph of options.text.split(/\r\n|\r|\n/)) {
    let line = '';
    for (const word of paragraph.split(' ')) {
      const candidate = line ? `${line} ${word}` : word;
      if (textWidth(font, candidate, size) <= maxWidth || !line) {
        line = candidate;
      } else {
        lines.push(line);
        line = word;
      }
      while (textWidth(font, line, size) > maxWidth && line.length > 1) {
        let cut = line.length - 1;
        while (cut > 1 && textWidth(font, line.slice(0, cut), size) > maxWidth) cut--;
        lines.push(line.slice(0, cut));
        line = line.slice(cut);
      }
    }
    lines.push(line);
  }
  return lines;
}
