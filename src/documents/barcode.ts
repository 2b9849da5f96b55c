import QRCode from 'qrcode';

/**
 * The document's barcode: a QR code PNG pointing at its verification address, made at creation and
 * kept as a file of the document (spec Document `barcode`; Image entry subtype `image_barcode`).
 */
export async function barcodePng(publicUrl: string, documentId: string): Promise<Buffer> {
  return QRCode.toBuffer(`${publicUrl}/api/v1/documents/${documentId}/verify`, {
    type: 'png',
    errorCorrectionLevel: 'M',
    margin: 1,
    width: 256,
  });
}
