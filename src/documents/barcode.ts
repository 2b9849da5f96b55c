import QRCode from 'qrcode';
import type { Config } from '../base/config.js';

/**
 * Where a document's barcode leads: the public verification page (issue 27), told which document it
 * is about. Anyone who scans a printed or saved copy can check the PDF there without an account (the
 * API's GET /documents/{id}/verify answers only those who may see the document). With the page
 * turned off (PUBLIC_VERIFY=off), the API's address, as before the page existed.
 */
export function documentVerifyUrl(
  config: Pick<Config, 'publicUrl' | 'publicVerify'>,
  documentId: string,
): string {
  const id = encodeURIComponent(documentId);
  return config.publicVerify.enabled
    ? `${config.publicUrl}/verify?document=${id}`
    : `${config.publicUrl}/api/v1/documents/${id}/verify`;
}

/**
 * The document's barcode: a QR code PNG pointing at its verification address, made at creation and
 * kept as a file of the document (spec Document `barcode`; Image entry subtype `image_barcode`).
 */
export async function barcodePng(
  config: Pick<Config, 'publicUrl' | 'publicVerify'>,
  documentId: string,
): Promise<Buffer> {
  return QRCode.toBuffer(documentVerifyUrl(config, documentId), {
    type: 'png',
    errorCorrectionLevel: 'M',
    margin: 1,
    width: 256,
  });
}
