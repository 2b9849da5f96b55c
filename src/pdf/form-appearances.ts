import { PdfBool, PdfDict } from '@libpdf/core';
import { hasEngine, type AppendablePdf } from './appendable-pdf.js';
import { findSignatures } from './find-signatures.js';
import { NotReadableLazily } from './reader/stream-data.js';
import type { IncrementalUpdate } from './writer/incremental-writer.js';

/**
 * Settles an AcroForm's `/NeedAppearances true` in the revision of a document's first signature
 * (issue 23). The flag asks viewers to redraw every field widget themselves, and the viewers built on
 * poppler (Evince, Okular, pdftoppm) then redraw signature widgets empty: the signature is invisible
 * there. LibreOffice writes the flag on every form it exports, with text field appearances left empty.
 * So the first signature's revision does what the flag asks once and for all: it draws the
 * appearance of each field that shows a value (text fields; check boxes, radio buttons and choice
 * fields that have none), and turns the flag off, as Acrobat does when it signs. Each field keeps its
 * value; read-only fields keep the appearance their producer wrote.
 *
 * Once a document carries a signature the form is left as it is: a later change to field
 * appearances would be a change after that signature, which its signer did not allow.
 *
 * Drawing them is the engine's work, on its full parse of the file: read lazily, such a file is
 * `NotReadableLazily` here, and `updatePdf` starts again on the full parse (a form's first signature
 * only; later ones find the flag off).
 *
 * ```ts
 * const update = new IncrementalUpdate(opened);
 * settleNeedAppearances({ opened, update }); // first, before anything is allocated in the update
 * ```
 */
export function settleNeedAppearances(options: {
  opened: AppendablePdf;
  update: IncrementalUpdate;
}): boolean {
  const { opened, update } = options;
  const catalog = opened.resolve(opened.trailer.root);
  const acroFormDict = catalog instanceof PdfDict ? opened.resolve(catalog.get('AcroForm')) : undefined;
  if (!(acroFormDict instanceof PdfDict)) return false;
  const needAppearances = opened.resolve(acroFormDict.get('NeedAppearances'));
  if (!(needAppearances instanceof PdfBool) || !needAppearances.value) return false;
  if (findSignatures({ opened }).length > 0) return false;
  if (!hasEngine(opened)) throw new NotReadableLazily('form field appearances to draw');
  const acroForm = opened.pdf.getForm()?.acroForm();
  if (!acroForm) return false;
  // The engine draws appearances the way viewers do for NeedAppearances (its own generator, the
  // fonts of the form's /DR), and removes the flag.
  acroForm.markAllNeedAppearanceUpdate();
  acroForm.updateAppearances();
  acroForm.getDict().set('NeedAppearances', PdfBool.of(false));
  update.includeEngineChanges(opened.pdf);
  return true;
}
