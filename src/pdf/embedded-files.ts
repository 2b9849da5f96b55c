import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import {
  PdfArray,
  PdfDict,
  PdfName,
  PdfNumber,
  PdfRef,
  PdfStream,
  PdfString,
  type PdfObject,
} from '@libpdf/core';
import { pdfDate } from './annotations.js';
import { readPdf, updatePdf, type AppendablePdf } from './appendable-pdf.js';
import { PdfInvalid } from './errors.js';
import { memorySource } from './reader/byte-source.js';
import { IncrementalUpdate, wholeFile, type WrittenUpdate } from './writer/incremental-writer.js';

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

/** A file found inside a PDF's EmbeddedFiles name tree. */
export interface EmbeddedFile {
  name: string;
  mimeType?: string;
  bytes: Uint8Array;
}

/** Name trees deeper than this are not walked (a hostile file could nest them without end). */
const MAX_DEPTH = 16;

/**
 * Embeds files in a new incremental update: each an EmbeddedFile stream (compressed, with its size,
 * modification date and MD5 checksum) behind a file specification in the catalog's EmbeddedFiles name
 * tree and its associated files (`/AF`, with `/AFRelationship`), so viewers list them as attachments
 * and PDF/A-3 tools as associated files. Files already embedded stay; one of the same name is
 * replaced in the tree (the bytes of the earlier one stay in their revision).
 *
 * ```ts
 * const withTrail = await attachFiles({ pdf, files: [{ name: 'audit-trail.json', mimeType: 'application/json', bytes, description: 'Audit trail', relationship: 'Supplement', modified: now }] });
 * ```
 */
export async function attachFiles(options: { pdf: Uint8Array; files: FileToEmbed[] }): Promise<Uint8Array> {
  return updatePdf(memorySource(options.pdf), (opened) => wholeFile(attachmentUpdate(opened, options.files)));
}

function attachmentUpdate(opened: AppendablePdf, files: FileToEmbed[]): WrittenUpdate {
  const update = new IncrementalUpdate(opened);
  const catalog = opened.resolve(opened.trailer.root);
  if (!(catalog instanceof PdfDict)) throw new PdfInvalid('The PDF has no catalog');

  const entries = new Map(embeddedFileEntries(opened).map((e) => [e.name, e.spec] as const));
  const associated = opened.resolve(catalog.get('AF'));
  const af = associated instanceof PdfArray ? associated : new PdfArray();
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
    const spec = update.add(
      PdfDict.of({
        Type: PdfName.of('Filespec'),
        F: PdfString.fromString(file.name),
        UF: PdfString.fromString(file.name),
        Desc: PdfString.fromString(file.description),
        AFRelationship: PdfName.of(file.relationship),
        EF: PdfDict.of({ F: stream, UF: stream }),
      }),
    );
    entries.set(file.name, spec);
    af.push(spec);
  }
  // One leaf holding every name, sorted as a name tree must be (ISO 32000-2 7.9.6).
  const names = new PdfArray();
  for (const [name, spec] of [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    names.push(PdfString.fromString(name));
    names.push(spec);
  }
  const namesEntry = catalog.get('Names');
  const existingNames = opened.resolve(namesEntry);
  const namesDict = existingNames instanceof PdfDict ? existingNames : new PdfDict();
  namesDict.set('EmbeddedFiles', update.add(PdfDict.of({ Names: names })));
  if (namesEntry instanceof PdfRef) update.set(namesEntry, namesDict);
  else catalog.set('Names', namesDict);
  const afEntry = catalog.get('AF');
  if (afEntry instanceof PdfRef) update.set(afEntry, af);
  else catalog.set('AF', af);
  update.set(opened.trailer.root, catalog);
  return update.write();
}

/**
 * The files of a PDF's EmbeddedFiles name tree, in name order; a specification whose stream cannot
 * be read is left out. `pdf` is the bytes, or the PDF read from them (readPdf).
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
    const dict = opened.resolve(spec);
    if (!(dict instanceof PdfDict)) continue;
    const ef = opened.resolve(dict.get('EF'));
    if (!(ef instanceof PdfDict)) continue;
    const stream = opened.resolve(ef.get('UF') ?? ef.get('F'));
    if (!(stream instanceof PdfStream)) continue;
    try {
      const subtype = stream.get('Subtype');
      files.push({
        name,
        ...(subtype instanceof PdfName ? { mimeType: subtype.value } : {}),
        bytes: stream.getDecodedData(),
      });
    } catch {
      // An undecodable stream is not a file anyone can check.
    }
  }
  return files;
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
