import { PdfArray, PdfDict, PdfName, PdfNumber, PdfRef, PdfString } from '@libpdf/core';
import { PdfInvalid } from './errors.js';
import type { AppendablePdf } from './appendable-pdf.js';
import { rectArray, type PageGeometries } from './geometry.js';
import type { BuiltAnnotations } from './visuals/build-annotations.js';
import type { IncrementalUpdate } from './writer/incremental-writer.js';

export interface AddSignatureFieldOptions {
  opened: AppendablePdf;
  update: IncrementalUpdate;
  pages: PageGeometries;
  /** The signature dictionary (its /Contents holds the CMS or the timestamp token). */
  signature: PdfRef;
  /** Prefix of the generated field name, e.g. `Signature` or `DocTimeStamp`. */
  namePrefix: string;
  /** The visible appearance of the signature; absent for an invisible signature on page 1. */
  widget?: BuiltAnnotations['widget'];
  /** The appearance of an invisible signature that has one (the form XObject carrying its files). */
  appearance?: PdfRef;
  /** Collects the widget for the page's /Annots. */
  byPage: Map<number, PdfRef[]>;
}

const PRINT_LOCKED = 4 | 128;

/**
 * Adds a signature field (field and widget merged in one dictionary, ISO 32000-1 12.7.3.1) to the
 * AcroForm, with /SigFlags 3 (signatures exist, append only). The widget shows the signer's first
 * visual when there is one, so clicking it in a viewer opens that signature.
 *
 * ```ts
 * const { fieldName } = addSignatureField({ opened, update, pages, signature: sigRef, namePrefix: 'Signature', byPage });
 * ```
 */
export function addSignatureField(options: AddSignatureFieldOptions): { fieldName: string } {
  const { opened, update, pages, widget } = options;
  const catalog = opened.resolve(opened.trailer.root);
  if (!(catalog instanceof PdfDict)) throw new PdfInvalid('The PDF has no catalog');
  const names = new Set<string>();
  const acroFormEntry = catalog.get('AcroForm');
  const acroForm = opened.resolve(acroFormEntry);
  const fieldsEntry = acroForm instanceof PdfDict ? acroForm.get('Fields') : undefined;
  const fields = opened.resolve(fieldsEntry);
  if (fields instanceof PdfArray) collectNames(opened, fields, '', names, 0);
  let n = 1;
  while (names.has(`${options.namePrefix}${n}`)) n++;
  const fieldName = `${options.namePrefix}${n}`;

  const pageIndex = widget?.pageIndex ?? 0;
  const field = PdfDict.of({
    FT: PdfName.of('Sig'),
    T: PdfString.fromString(fieldName),
    V: options.signature,
    Type: PdfName.of('Annot'),
    Subtype: PdfName.of('Widget'),
    F: PdfNumber.of(PRINT_LOCKED),
    P: pages.at(pageIndex).ref,
    Rect: rectArray(widget ? widget.placed.rect : [0, 0, 0, 0]),
  });
  if (widget) {
    field.set('AP', PdfDict.of({ N: widget.appearance }));
    if (widget.comment) field.set('TU', PdfString.fromString(widget.comment));
  } else if (options.appearance) field.set('AP', PdfDict.of({ N: options.appearance }));
  const fieldRef = update.add(field);
  options.byPage.set(pageIndex, [...(options.byPage.get(pageIndex) ?? []), fieldRef]);

  if (acroForm instanceof PdfDict) {
    acroForm.set('SigFlags', PdfNumber.of(3));
    if (fieldsEntry instanceof PdfRef && fields instanceof PdfArray) {
      fields.push(fieldRef);
      update.set(fieldsEntry, fields);
    } else {
      const array = fields instanceof PdfArray ? fields : new PdfArray();
      array.push(fieldRef);
      acroForm.set('Fields', array);
    }
    if (acroFormEntry instanceof PdfRef) update.set(acroFormEntry, acroForm);
    else update.set(opened.trailer.root, catalog);
  } else {
    const created = update.add(PdfDict.of({ Fields: new PdfArray([fieldRef]), SigFlags: PdfNumber.of(3) }));
    catalog.set('AcroForm', created);
    update.set(opened.trailer.root, catalog);
  }
  return { fieldName };
}

/**
 * Whether the AcroForm holds a signed signature field (one whose /V is set): a signature made now
 * comes after another, and its revision must hold only what may follow a signature.
 *
 * ```ts
 * buildAnnotations({ ..., composeOnWidgetPage: hasSignedField(opened) });
 * ```
 */
export function hasSignedField(opened: AppendablePdf): boolean {
  const catalog = opened.resolve(opened.trailer.root);
  if (!(catalog instanceof PdfDict)) return false;
  const acroForm = opened.resolve(catalog.get('AcroForm'));
  const fields = acroForm instanceof PdfDict ? opened.resolve(acroForm.get('Fields')) : undefined;
  if (!(fields instanceof PdfArray)) return false;
  const signed = (kids: PdfArray, inherited: string | undefined, depth: number): boolean =>
    depth <= 32 &&
    kids.toArray().some((item) => {
      const field = opened.resolve(item);
      if (!(field instanceof PdfDict)) return false;
      const type = opened.resolve(field.get('FT'));
      const fieldType = type instanceof PdfName ? type.value : inherited;
      if (fieldType === 'Sig' && field.get('V') !== undefined) return true;
      const children = opened.resolve(field.get('Kids'));
      return children instanceof PdfArray && signed(children, fieldType, depth + 1);
    });
  return signed(fields, undefined, 0);
}

function collectNames(
  opened: AppendablePdf,
  kids: PdfArray,
  prefix: string,
  names: Set<string>,
  depth: number,
): void {
  if (depth > 32) return;
  for (const item of kids) {
    const field = opened.resolve(item);
    if (!(field instanceof PdfDict)) continue;
    const t = field.get('T');
    const name = t instanceof PdfString ? (prefix ? `${prefix}.${t.asString()}` : t.asString()) : prefix;
    if (name) names.add(name);
    const children = opened.resolve(field.get('Kids'));
    if (children instanceof PdfArray) collectNames(opened, children, name, names, depth + 1);
  }
}
