import QRCode from 'qrcode';

export interface QrPngOptions {
  text: string;
  /** Pixels per module (default 8): enough for a sharp print at the sizes documents use. */
  scale?: number;
  /** Error correction level (default M). */
  errorCorrectionLevel?: 'L' | 'M' | 'Q' | 'H';
}

/**
 * A QR code as PNG bytes: the document barcode placed by annotate (`subtype: 'image_barcode'`).
 *
 * ```ts
 * const png = await qrPng({ text: `${publicUrl}/documents/${documentId}` }); // or qrPng(text)
 * ```
 */
export async function qrPng(input: QrPngOptions | string): Promise<Uint8Array> {
  const options = typeof input === 'string' ? { text: input } : input;
  const buffer = await QRCode.toBuffer(options.text, {
    type: 'png',
    scale: options.scale ?? 8,
    margin: 2,
    errorCorrectionLevel: options.errorCorrectionLevel ?? 'M',
  });
  return new Uint8Array(buffer);
}
