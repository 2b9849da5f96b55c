import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { PdfArray, PdfDict, PdfName, PdfNumber, PdfRef, PdfStream, type PdfObject } from '@libpdf/core';
import { updatePdf, type AppendablePdf } from './appendable-pdf.js';
import { PdfInvalid } from './errors.js';
import { sourceOf, type PdfBytes } from './reader/byte-source.js';
import { IncrementalUpdate, wholeFile, type WrittenUpdate } from './writer/incremental-writer.js';

export interface AddValidationDataOptions {
  pdf: PdfBytes;
  /** Certificates of the signers' chains and of the TSAs (DER). */
  certificates?: Uint8Array[];
  /** CRLs (DER). */
  crls?: Uint8Array[];
  /** OCSP responses (DER OCSPResponse). */
  ocsps?: Uint8Array[];
  /**
   * The signatures (their /Contents: the CMS, or a document timestamp's token) this material validates:
   * each gets a VRI entry (ETSI EN 319 142-1 5.4.2.4, keyed by the uppercase hex SHA-1 of those bytes)
   * naming the certificates, CRLs and OCSP responses given here.
   */
  vriFor?: Uint8Array[];
}

/**
 * Adds (or extends) the Document Security Store in a new incremental update: the validation material
 * of PAdES B-LT (ETSI EN 319 142-1 5.4), so the signatures can be validated after certificates expire
 * or revocation services vanish. Existing DSS entries are kept; identical items are stored once.
 *
 * ```ts
 * const withDss = await addValidationData({ pdf, certificates: [signer, ...chain, ...tsaCerts], crls: [crl] });
 * ```
 */
export async function addValidationData(options: AddValidationDataOptions): Promise<Uint8Array> {
  return wholeFile(await validationDataUpdate(options));
}

/**
 * `addValidationData` without the copy: the update as laid out after the file it extends.
 *
 * ```ts
 * const { tail } = await validationDataUpdate({ pdf: appendedSource(original, signed), crls });
 * ```
 */
export function validationDataUpdate(options: AddValidationDataOptions): Promise<WrittenUpdate> {
  return updatePdf(sourceOf(options.pdf), (opened) => dssUpdate(opened, options));
}

function dssUpdate(opened: AppendablePdf, options: AddValidationDataOptions): WrittenUpdate {
  const update = new IncrementalUpdate(opened);
  const catalog = opened.resolve(opened.trailer.root);
  if (!(catalog instanceof PdfDict)) throw new PdfInvalid('The PDF has no catalog');
  const existing = opened.resolve(catalog.get('DSS'));
  const dss = existing instanceof PdfDict ? existing : PdfDict.of({ Type: PdfName.of('DSS') });
  const dssRef = catalog.get('DSS') instanceof PdfRef ? (catalog.get('DSS') as PdfRef) : update.allocate();

  const vri = PdfDict.of({});
  for (const [key, vriKey, items] of [
    ['Certs', 'Cert', options.certificates ?? []],
    ['CRLs', 'CRL', options.crls ?? []],
    ['OCSPs', 'OCSP', options.ocsps ?? []],
  ] as const) {
    if (items.length === 0) continue;
    const arrayEntry = dss.get(key);
    const array = opened.resolve(arrayEntry);
    const refs = array instanceof PdfArray ? array : new PdfArray();
    const known = new Map(refs.toArray().map((item) => [streamKey(opened, item), item] as const));
    const named = new PdfArray();
    for (const der of items) {
      const keyOf = Buffer.from(der).toString('base64');
      let ref = known.get(keyOf);
      if (!ref) {
        const data = deflateSync(der);
        ref = update.add(PdfStream.fromDict({ Filter: PdfName.of('FlateDecode') }, new Uint8Array(data)));
        known.set(keyOf, ref);
        refs.push(ref);
      }
      named.push(ref);
    }
    vri.set(vriKey, named);
    if (arrayEntry instanceof PdfRef) update.set(arrayEntry, refs);
    else dss.set(key, refs);
  }
  if (options.vriFor?.length) {
    const entryRef = dss.get('VRI');
    const existingVri = opened.resolve(entryRef);
    const vris = existingVri instanceof PdfDict ? existingVri : new PdfDict();
    const vriRef = update.add(vri);
    for (const contents of options.vriFor) {
      vris.set(createHash('sha1').update(contents).digest('hex').toUpperCase(), vriRef);
    }
    if (entryRef instanceof PdfRef) update.set(entryRef, vris);
    else dss.set('VRI', vris);
  }
  update.set(dssRef, dss);
  catalog.set('DSS', dssRef);
  declareExtension(opened, catalog);
  update.set(opened.trailer.root, catalog);
  return update.write();
}

/**
 * Declares the PAdES extensions (ESIC, ETSI TS 102 778-4 / EN 319 142-1) in the catalog, as readers
 * of PDF 1.7 files with a DSS or document timestamps expect.
 *
 * ```ts
 * declareExtension(opened, catalog);
 * update.set(opened.trailer.root, catalog);
 * ```
 */
export function declareExtension(opened: AppendablePdf, catalog: PdfDict): void {
  const extensions = opened.resolve(catalog.get('Extensions'));
  const dict = extensions instanceof PdfDict ? extensions : new PdfDict();
  if (!dict.has('ESIC')) {
    dict.set('ESIC', PdfDict.of({ BaseVersion: PdfName.of('1.7'), ExtensionLevel: PdfNumber.of(5) }));
    if (!(catalog.get('Extensions') instanceof PdfRef)) catalog.set('Extensions', dict);
  }
}

function streamKey(opened: AppendablePdf, item: PdfObject): string {
  const stream = opened.resolve(item);
  if (!(stream instanceof PdfStream)) return '';
  try {
    return Buffer.from(stream.getDecodedData()).toString('base64');
  } catch {
    return '';
  }
}
