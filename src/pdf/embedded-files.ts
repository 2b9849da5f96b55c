import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { PdfArray, PdfDict, PdfName, PdfNumber, PdfStream, PdfString, type PdfObject } from '@libpdf/core';
import { pdfDate } from './annotations.js';
import { readPdf, type AppendablePdf } from './appendable-pdf.js';
import type { IncrementalUpdate } from './writer/incremental-writer.js';

/** A file to carry inside a PDF (ISO 32000-2 7.11.4, an associated file as PDF/A-3 has them). */
export interface FileToEmbed {
  name: string;
  mimeType: string;
  bytes: Uint8Array;
  description: string;
  /** How it relates to the document (ISO 32000-2 14.13.2): `Supplement`, `Data`, `Source`, … */
  relationship: 'Supplement' | 'Data' | 'Source' | 'Alternative' | 'Unspecified';
  modified: Date;
}

/** A file found inside a PDF: in its EmbeddedFiles name tree, or carried by a signature's appearance. */
export interface EmbeddedFile {
  name: string;
  mimeType?: string;
  bytes: Uint8Array;
  /** The signature field whose appearance carries the file (absent: the catalog's EmbeddedFiles). */
  field?: string;
}

/** Name trees and field trees deeper than this are not walked (a hostile file could nest them without end). */
const MAX_DEPTH = 16;

/**
 * Writes files into an update as associated files (ISO 32000-2 7.11.4 and 14.13): each an
 * EmbeddedFile stream (compressed, with its size, modification date and MD5 checksum) behind a file
 * specification with its `/AFRelationship`; answers the `/AF` array of those specifications, for the
 * object that carries them. Signing puts it on the new signature's appearance (prepare-signature.ts):
 * then the files are part of the signature's own revision, which it covers, and nothing else in the
 * document changes (validators judging what changed after earlier signatures allow a new signature
 * field with whatever its appearance holds, and no change to the catalog's /Names or /AF).
 *
 * ```ts
 * appearance.set('AF', associatedFiles(update, [{ name: 'audit-trail.json', mimeType: 'application/json', bytes, description: 'Audit trail', relationship: 'Supplement', modified: now }]));
 * ```
 */
export function associatedFiles(update: IncrementalUpdate, files: FileToEmbed[]): PdfArray {
  const af = new PdfArray();
  for (const file of files) {
    const stream = update.add(
      PdfStream.fromDict(
        {
          Type: PdfName.of('EmbeddedFile'),
          Subtype: PdfName.of(file.mimeType),
          Filter: PdfName.of('FlateDecode'),
          Params: PdfDict.of({
            Size: PdfNumber.of(file.bytes.length),
            ModDate: pdfDate(file.modified),
            CheckSum: PdfString.fromBytes(createHash('md5').update(file.bytes).digest()),
          }),
        },
        new Uint8Array(deflateSync(file.bytes)),
      ),
    );
    af.push(
      update.add(
        PdfDict.of({
          Type: PdfName.of('Filespec'),
          F: PdfString.fromString(file.name),
          UF: PdfString.fromString(file.name),
          Desc: PdfString.fromString(file.description),
          AFRelationship: PdfName.of(file.relationship),
          EF: PdfDict.of({ F: stream, UF: stream }),
        }),
      ),
    );
  }
  return af;
}

/**
 * The files a PDF carries: those of its EmbeddedFiles name tree, in name order (where documents
 * sealed before issue 38 have their audit trail), then the associated files of each signature
 * field's appearance (`/AP /N /AF`), in field order, each with its field's name (where the seal's
 * revision puts the trail now). A specification whose stream cannot be read is left out. `pdf` is the
 * bytes, or the PDF read from them (readPdf).
 *
 * ```ts
 * const trail = (await readEmbeddedFiles({ pdf })).find((f) => f.name === 'audit-trail.json');
 * ```
 */
export async function readEmbeddedFiles(options: {
  pdf: Uint8Array | AppendablePdf;
}): Promise<EmbeddedFile[]> {
  const { pdf } = options;
  return pdf instanceof Uint8Array ? readPdf(pdf, embeddedFiles) : embeddedFiles(pdf);
}

function embeddedFiles(opened: AppendablePdf): EmbeddedFile[] {
  const files: EmbeddedFile[] = [];
  for (const { name, spec } of embeddedFileEntries(opened)) {
    const file = fileOf(opened, spec, name);
    if (file) files.push(file);
  }
  for (const { field, af } of signatureAppearanceFiles(opened)) {
    for (const spec of af) {
      const dict = opened.resolve(spec);
      const name = dict instanceof PdfDict ? opened.resolve(dict.get('UF') ?? dict.get('F')) : undefined;
      if (!(name instanceof PdfString)) continue;
      const file = fileOf(opened, spec, name.asString());
      if (file) files.push({ ...file, field });
    }
  }
  return files;
}

/** The file a file specification embeds, or undefined when there is none to read. */
function fileOf(opened: AppendablePdf, spec: PdfObject, name: string): EmbeddedFile | undefined {
  const dict = opened.resolve(spec);
  if (!(dict instanceof PdfDict)) return undefined;
  const ef = opened.resolve(dict.get('EF'));
  if (!(ef instanceof PdfDict)) return undefined;
  const stream = opened.resolve(ef.get('UF') ?? ef.get('F'));
  if (!(stream instanceof PdfStream)) return undefined;
  try {
    const subtype = stream.get('Subtype');
    return {
      name,
      ...(subtype instanceof PdfName ? { mimeType: subtype.value } : {}),
      bytes: stream.getDecodedData(),
    };
  } catch {
    // An undecodable stream is not a file anyone can check.
    return undefined;
  }
}

/**
 * The `/AF` arrays of the signature fields' normal appearances (a field merged with its widget, or its
 * widget kids), each with the field's name, in the order of the AcroForm's fields.
 */
function signatureAppearanceFiles(opened: AppendablePdf): { field: string; af: PdfObject[] }[] {
  const catalog = opened.resolve(opened.trailer.root);
  const acroForm = catalog instanceof PdfDict ? opened.resolve(catalog.get('AcroForm')) : undefined;
  const fields = acroForm instanceof PdfDict ? opened.resolve(acroForm.get('Fields')) : undefined;
  const found: { field: string; af: PdfObject[] }[] = [];
  const seen = new Set<PdfDict>();
  const appearanceFiles = (widget: PdfDict): PdfObject[] => {
    const ap = opened.resolve(widget.get('AP'));
    const normal = ap instanceof PdfDict ? opened.resolve(ap.get('N')) : undefined;
    const af = normal instanceof PdfStream ? opened.resolve(normal.get('AF')) : undefined;
    return af instanceof PdfArray ? af.toArray() : [];
  };
  const visit = (item: PdfObject, prefix: string, inheritedFt: string | undefined, depth: number): void => {
    const field = opened.resolve(item);
    if (!(field instanceof PdfDict) || depth > MAX_DEPTH || seen.has(field)) return;
    seen.add(field);
    const t = field.get('T');
    const name = t instanceof PdfString ? (prefix ? `${prefix}.${t.asString()}` : t.asString()) : prefix;
    const ftObject = field.get('FT');
    const ft = ftObject instanceof PdfName ? ftObject.value : inheritedFt;
    if (ft === 'Sig') {
      const af = appearanceFiles(field);
      if (af.length > 0) found.push({ field: name, af });
    }
    const kids = opened.resolve(field.get('Kids'));
    if (kids instanceof PdfArray) for (const kid of kids) visit(kid, name, ft, depth + 1);
  };
  if (fields instanceof PdfArray) for (const item of fields) visit(item, '', undefined, 0);
  return found;
}

/** The (name, file specification) pairs of the catalog's EmbeddedFiles name tree. */
function embeddedFileEntries(opened: AppendablePdf): { name: string; spec: PdfObject }[] {
  const catalog = opened.resolve(opened.trailer.root);
  if (!(catalog instanceof PdfDict)) return [];
  const names = opened.resolve(catalog.get('Names'));
  if (!(names instanceof PdfDict)) return [];
  const found: { name: string; spec: PdfObject }[] = [];
  const walk = (node: PdfObject | undefined, depth: number) => {
    const dict = opened.resolve(node);
    if (!(dict instanceof PdfDict) || depth > MAX_DEPTH) return;
    const leaf = opened.resolve(dict.get('Names'));
    if (leaf instanceof PdfArray) {
      const items = leaf.toArray();
      for (let i = 0; i + 1 < items.length; i += 2) {
        const key = opened.resolve(items[i]);
        if (key instanceof PdfString) found.push({ name: key.asString(), spec: items[i + 1]! });
      }
    }
    const kids = opened.resolve(dict.get('Kids'));
    if (kids instanceof PdfArray) for (const kid of kids.toArray()) walk(kid, depth + 1);
  };
  walk(names.get('EmbeddedFiles'), 0);
  return found;
}
