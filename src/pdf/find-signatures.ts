import { PdfArray, PdfDict, PdfName, PdfNumber, PdfStream, PdfString, type PdfObject } from '@libpdf/core';
import { derLength } from '../pki/der.js';
import { parsePdfDate } from './annotations.js';
import { withoutDecryptionWarnings } from './encryption.js';
import type { AppendablePdf } from './appendable-pdf.js';
import type { ByteSource } from './reader/byte-source.js';
import { decodeHex } from './reader/hex.js';

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
export function findSignatures(options: { opened: AppendablePdf }): FoundSignature[] {
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
    const valueEntry = field.get('V');
    const value = opened.encryption
      ? withoutDecryptionWarnings(() => opened.resolve(valueEntry))
      : opened.resolve(valueEntry);
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

/**
 * The hex string a byte range leaves out, decoded, when it is one and holds a DER value in the clear
 * (a SEQUENCE); undefined otherwise (a producer that encrypted /Contents: the engine's decryption stands).
 */
function clearContents(source: ByteSource, byteRange: number[]): Uint8Array | undefined {
  const [, start, end] = byteRange;
  if (start === undefined || end === undefined || !(start >= 0 && end <= source.length && end - start > 2))
    return undefined;
  const bytes = source.read(start, end);
  if (bytes[0] !== 0x3c || bytes[bytes.length - 1] !== 0x3e) return undefined;
  const decoded = decodeHex(bytes, 1, bytes.length - 1);
  return decoded?.[0] === 0x30 ? decoded : undefined;
}

function end(byteRange: number[]): number {
  return (byteRange[2] ?? 0) + (byteRange[3] ?? 0);
}

function readSignatureDictionary(
  opened: AppendablePdf,
  dict: PdfDict,
  fieldName: string,
): FoundSignature | undefined {
  const contentsEntry = dict.get('Contents');
  const byteRangeEntry = opened.resolve(dict.get('ByteRange'));
  if (!(contentsEntry instanceof PdfString) || !(byteRangeEntry instanceof PdfArray)) return undefined;
  const byteRange = byteRangeEntry.toArray().map((n) => (n instanceof PdfNumber ? n.value : NaN));
  // In an encrypted file /Contents is in the clear (ISO 32000-2 7.6.2) while the engine decrypts every
  // string (into noise, or not at all with AES): read it where the byte range leaves it out.
  const contents =
    (opened.encryption ? clearContents(opened.source, byteRange) : undefined) ?? contentsEntry.bytes;
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
    contents: contents.subarray(0, Math.min(derLength(contents), contents.length)),
    byteRange,
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
export function readDss(options: { opened: AppendablePdf }): DocumentSecurityStore | undefined {
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
