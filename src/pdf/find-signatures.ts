import { PdfArray, PdfDict, PdfName, PdfNumber, PdfStream, PdfString, type PdfObject } from '@libpdf/core';
import { derLength } from '../pki/der.js';
import { parsePdfDate } from './annotations.js';
import type { OpenedPdf } from './open-pdf.js';

export interface FoundSignature {
  fieldName: string;
  /** `DocTimeStamp` for document timestamps (SubFilter ETSI.RFC3161). */
  type: 'Sig' | 'DocTimeStamp';
  subFilter: string;
  /** The DER in /Contents, without the zero padding (its length read from the DER header). */
  contents: Uint8Array;
  byteRange: number[];
  name?: string;
  reason?: string;
  location?: string;
  /** /M as written. */
  claimedTime?: Date;
}

export interface DocumentSecurityStore {
  certificates: Uint8Array[];
  crls: Uint8Array[];
  ocsps: Uint8Array[];
}

/**
 * The signature fields of a PDF that hold a value, in file order (oldest revision first). DESIGN:
 * never strip trailing zeros from /Contents; the DER length says where the CMS ends.
 *
 * ```ts
 * for (const signature of findSignatures({ opened })) console.log(signature.fieldName, signature.byteRange);
 * ```
 */
export function findSignatures(options: { opened: OpenedPdf }): FoundSignature[] {
  const { opened } = options;
  const catalog = opened.resolve(opened.trailer.root);
  const acroForm = catalog instanceof PdfDict ? opened.resolve(catalog.get('AcroForm')) : undefined;
  const fields = acroForm instanceof PdfDict ? opened.resolve(acroForm.get('Fields')) : undefined;
  const found: FoundSignature[] = [];
  const seen = new Set<PdfDict>();
  const visit = (item: PdfObject, prefix: string, inheritedFt: string | undefined, depth: number): void => {
    const field = opened.resolve(item);
    if (!(field instanceof PdfDict) || depth > 32 || seen.has(field)) return;
    seen.add(field);
    const t = field.get('T');
    const name = t instanceof PdfString ? (prefix ? `${prefix}.${t.asString()}` : t.asString()) : prefix;
    const ftObject = field.get('FT');
    const ft = ftObject instanceof PdfName ? ftObject.value : inheritedFt;
    const value = opened.resolve(field.get('V'));
    if (ft === 'Sig' && value instanceof PdfDict) {
      const signature = readSignatureDictionary(opened, value, name);
      if (signature) found.push(signature);
    }
    const kids = opened.resolve(field.get('Kids'));
    if (kids instanceof PdfArray) for (const kid of kids) visit(kid, name, ft, depth + 1);
  };
  if (fields instanceof PdfArray) for (const item of fields) visit(item, '', undefined, 0);
  return found.sort((a, b) => end(a.byteRange) - end(b.byteRange));
}

function end(byteRange: number[]): number {
  return (byteRange[2] ?? 0) + (byteRange[3] ?? 0);
}

function readSignatureDictionary(
  opened: OpenedPdf,
  dict: PdfDict,
  fieldName: string,
): FoundSignature | undefined {
  const contents = dict.get('Contents');
  const byteRange = opened.resolve(dict.get('ByteRange'));
  if (!(contents instanceof PdfString) || !(byteRange instanceof PdfArray)) return undefined;
  const text = (key: string): string | undefined => {
    const value = opened.resolve(dict.get(key));
    return value instanceof PdfString ? value.asString() : undefined;
  };
  const subFilterObject = dict.get('SubFilter');
  const subFilter = subFilterObject instanceof PdfName ? subFilterObject.value : '';
  const typeObject = dict.get('Type');
  const isTimestamp =
    (typeObject instanceof PdfName && typeObject.value === 'DocTimeStamp') || subFilter === 'ETSI.RFC3161';
  const m = text('M');
  return {
    fieldName,
    type: isTimestamp ? 'DocTimeStamp' : 'Sig',
    subFilter,
    contents: contents.bytes.subarray(0, Math.min(derLength(contents.bytes), contents.bytes.length)),
    byteRange: byteRange.toArray().map((n) => (n instanceof PdfNumber ? n.value : NaN)),
    name: text('Name'),
    reason: text('Reason'),
    location: text('Location'),
    claimedTime: m ? parsePdfDate(m) : undefined,
  };
}

/**
 * The DSS of the catalog (ETSI EN 319 142-1 5.4.2), its streams decoded.
 *
 * ```ts
 * const { certificates, crls, ocsps } = readDss({ opened }) ?? { certificates: [], crls: [], ocsps: [] };
 * ```
 */
export function readDss(options: { opened: OpenedPdf }): DocumentSecurityStore | undefined {
  const { opened } = options;
  const catalog = opened.resolve(opened.trailer.root);
  const dss = catalog instanceof PdfDict ? opened.resolve(catalog.get('DSS')) : undefined;
  if (!(dss instanceof PdfDict)) return undefined;
  const streams = (key: string): Uint8Array[] => {
    const array = opened.resolve(dss.get(key));
    if (!(array instanceof PdfArray)) return [];
    return array.toArray().flatMap((item) => {
      const stream = opened.resolve(item);
      if (!(stream instanceof PdfStream)) return [];
      try {
        return [stream.getDecodedData()];
      } catch {
        return [];
      }
    });
  };
  return { certificates: streams('Certs'), crls: streams('CRLs'), ocsps: streams('OCSPs') };
}
