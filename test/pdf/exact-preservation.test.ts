import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { verifyFile } from '../../src/ops/verify-file.js';
import { signAndSealThroughApi } from '../signing/through-the-api.js';
import { aDocument, mainFileOf, readDocument } from '../helpers/documents.js';
import { pdfOfObjects } from '../helpers/pdf.js';
import { useServer } from '../helpers/use-server.js';
import { libreOfficeForm } from '../fixtures/pdf-producers.js';
import { pdfsig, tool, useWorkspace } from './oracles.js';

const run = promisify(execFile);

/**
 * Issue 38 item 5: rewriting an object changes nothing it does not mean to change. When Signery adds
 * a visual to a page, the page dictionary gets a new version with /Annots; every other entry must
 * keep its exact text (numbers their spelling, strings literal or hex with their escapes, names their
 * `#xx` escapes), or a difference analysis of an earlier signature (pyHanko's "values for /MediaBox
 * differ") finds the page changed. The revisions are compared as text, entry by entry, by the small
 * tokenizer below (files without object streams, as the fixtures here are).
 */

/** The page of the generated fixture: long, negative and leading-dot reals, odd whitespace, escapes. */
const ODD_PAGE =
  '<</Type/Page/Parent 2 0 R/MediaBox[0 0 595.303937007874 841.889763779528]\n' +
  '/CropBox [ -.5  0.000001\t595.303937007874 841.889763779528 ] % a comment between entries\n' +
  '/UserUnit 1.0/Rotate 0 /Contents 4 0 R/Resources<</ProcSet[/PDF/Text]>>\n' +
  '/Signery#4eote (escapes \\( \\) \\\\ \\n \\101 and (balanced) parens)\n' +
  '/SigneryHex <48 65 6C6c 6F>\n' +
  '/SigneryName /A#42C#2FD\n' +
  '/SigneryMatrix [1.0 -0 +3 .25 1.50000 -.5 /N#61me]\n' +
  '/SigneryDict << /Nested 12.3400 /S (x) >> >>';

/** A one-page PDF with `page` as object 3, a cross-reference table and an /ID. */
function pdfWithPage(page: string): Buffer {
  const content = 'BT /F1 12 Tf 72 720 Td (Exact) Tj ET';
  const objects = [
    '<</Type/Catalog/Pages 2 0 R>>',
    '<</Type/Pages/Kids[3 0 R]/Count 1>>',
    page,
    `<</Length ${content.length}>>\nstream\n${content}\nendstream`,
  ];
  const id = '<0123456789abcdef0123456789abcdef>';
  return pdfOfObjects(objects, 1, ` /ID [${id} ${id}]`);
}

const WS = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]);
const DELIMS = new Set('()<>[]{}/%'.split('').map((c) => c.charCodeAt(0)));

/** End of the token starting at `at` (an array, dictionary or string whole). */
function tokenEnd(text: string, at: number): number {
  const c = text[at]!;
  if (c === '(') {
    let depth = 0;
    for (let i = at; i < text.length; i++) {
      if (text[i] === '\\') i++;
      else if (text[i] === '(') depth++;
      else if (text[i] === ')' && --depth === 0) return i + 1;
    }
  }
  if (c === '<' && text[at + 1] !== '<') return text.indexOf('>', at) + 1;
  if (c === '[' || (c === '<' && text[at + 1] === '<')) {
    let i = at + (c === '[' ? 1 : 2);
    for (;;) {
      i = skip(text, i);
      if (c === '[' && text[i] === ']') return i + 1;
      if (c === '<' && text.startsWith('>>', i)) return i + 2;
      i = tokenEnd(text, i);
    }
  }
  let i = at + 1;
  while (i < text.length && !WS.has(text.charCodeAt(i)) && !DELIMS.has(text.charCodeAt(i))) i++;
  return i;
}

function skip(text: string, at: number): number {
  let i = at;
  for (;;) {
    while (i < text.length && WS.has(text.charCodeAt(i))) i++;
    if (text[i] !== '%') return i;
    while (i < text.length && text[i] !== '\n' && text[i] !== '\r') i++;
  }
}

/** A dictionary's entries as written: each key's text and its value's text, in order. */
function entriesAsWritten(dict: string): [string, string][] {
  const entries: [string, string][] = [];
  let i = skip(dict, 0) + 2;
  for (;;) {
    i = skip(dict, i);
    if (dict.startsWith('>>', i)) return entries;
    const keyEnd = tokenEnd(dict, i);
    const key = dict.slice(i, keyEnd);
    const start = skip(dict, keyEnd);
    let end = tokenEnd(dict, start);
    // A reference `N G R` is one value.
    const ref = /^\s+\d+\s+R(?![^\s()<>[\]{}/%])/.exec(dict.slice(end));
    if (/^\d+$/.test(dict.slice(start, end)) && ref) end += ref[0].length;
    entries.push([key, dict.slice(start, end)]);
    i = end;
  }
}

/** The body of the last `number 0 obj` in `text` (from `from` on). */
function lastVersion(text: string, number: number, from = 0): string | undefined {
  const pattern = new RegExp(`(?:^|[\\s>])${number} 0 obj\\s*`, 'g');
  let found: number | undefined;
  for (let m = pattern.exec(text); m; m = pattern.exec(text))
    if (m.index + 1 >= from) found = m.index + m[0].length;
  if (found === undefined) return undefined;
  return text.slice(found, found + tokenEnd(text.slice(found), skip(text.slice(found), 0)));
}

/**
 * Every entry of `before` but /Annots (what adding a visual changes) is in `after`, spelled the same,
 * with the same value text, in the same order.
 */
function assertEntriesKept(before: string, after: string, what: string): void {
  const old = entriesAsWritten(before).filter(([key]) => key !== '/Annots');
  const rewritten = entriesAsWritten(after);
  const kept = rewritten.filter(([key]) => old.some(([k]) => k === key));
  assert.deepEqual(kept, old, `${what}: the untouched entries as written`);
}

describe('rewriting an object keeps the exact text of what it does not change', () => {
  const server = useServer();
  const space = useWorkspace();
  let admin: string;

  before(async () => {
    admin = await server.adminToken();
  });

  it('a page given a visual keeps its numbers, strings and names byte for byte (annotate, then sign)', async () => {
    const original = pdfWithPage(ODD_PAGE);
    const id = await aDocument(server, admin, { pdf: original, title: 'Exact' });
    const { _version: version } = await readDocument(server, admin, id);
    const annotated = await server.api('PUT', `/documents/annotate/${version}`, {
      token: admin,
      body: {
        id,
        annotations: [
          {
            text: 'Filed',
            pages: [1],
            position: { percentX: 0.1, percentY: 0.1, percentWidth: 0.3, percentHeight: 0.05 },
          },
        ],
      },
    });
    assert.equal(annotated.status, 200, annotated.text);
    const afterAnnotation = (await mainFileOf(server, admin, id)).toString('latin1');
    const originalText = original.toString('latin1');
    assert.ok(afterAnnotation.startsWith(originalText), 'an incremental update of the upload');
    const rewritten = lastVersion(afterAnnotation, 3, original.length);
    assert.ok(rewritten, 'the annotation rewrote the page');
    assert.match(rewritten, /\/Annots/);
    assertEntriesKept(ODD_PAGE, rewritten, 'annotated');
    assert.ok(rewritten.includes('[0 0 595.303937007874 841.889763779528]'), rewritten);
    assert.ok(rewritten.includes('[ -.5  0.000001\t595.303937007874 841.889763779528 ]'), rewritten);
    assert.ok(rewritten.includes('(escapes \\( \\) \\\\ \\n \\101 and (balanced) parens)'), rewritten);
    assert.ok(rewritten.includes('<48 65 6C6c 6F>') && rewritten.includes('/A#42C#2FD'), rewritten);

    const { _version: next } = await readDocument(server, admin, id);
    const signed = await server.api('PUT', `/documents/sign/${next}`, {
      token: admin,
      body: {
        id,
        signatures: [
          {
            type: 'signature',
            pages: [1],
            position: { percentX: 0.5, percentY: 0.7, percentWidth: 0.3, percentHeight: 0.1 },
            decorationType: 'frame',
          },
        ],
      },
    });
    assert.equal(signed.status, 200, signed.text);
    const afterSigning = (await mainFileOf(server, admin, id)).toString('latin1');
    const resigned = lastVersion(afterSigning, 3, afterAnnotation.length);
    assert.ok(resigned, 'the signature rewrote the page');
    assertEntriesKept(rewritten, resigned, 'signed');
    assertEntriesKept(ODD_PAGE, resigned, 'signed, against the upload');
  });

  it('a LibreOffice file signed first by mutool: its signature stays valid, and the page Signery rewrites keeps its /MediaBox text', async () => {
    // A real LibreOffice page (its /MediaBox has long reals), given an empty signature field on that
    // page (/Annots direct in the page, as a producer writes it) that `mutool sign` then signs.
    const dir = join(space.dir, 'other-tool');
    await mkdir(dir, { recursive: true });
    await space.write(
      'other-tool/contract.txt',
      'Agreement between the parties.\nSigned first by another tool.\n',
    );
    await run(
      'soffice',
      [
        '--headless',
        '--norestore',
        `-env:UserInstallation=file://${join(dir, 'lo-profile')}`,
        '--convert-to',
        'pdf',
        '--outdir',
        dir,
        join(dir, 'contract.txt'),
      ],
      { timeout: 120_000 },
    );
    const libre = (await readFile(join(dir, 'contract.pdf'))).toString('latin1');
    const pageMatch = /(\d+) 0 obj\s*(<<\/Type\/Page\/.*?>>)\s*endobj/s.exec(libre);
    assert.ok(pageMatch, 'LibreOffice wrote a page');
    const [, pageNumber, page] = pageMatch as unknown as [string, string, string];
    const mediaBox = /\/MediaBox\s*(\[[^\]]*\])/.exec(page)?.[1];
    assert.ok(mediaBox && /\d\.\d{9,}/.test(mediaBox), `a MediaBox with long reals: ${mediaBox}`);
    const withField = addSignatureField(libre, Number(pageNumber), page);
    const fieldPath = await space.write('other-tool/field.pdf', Buffer.from(withField.text, 'latin1'));

    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    const p12 = join(dir, 'id.p12');
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '30',
      '-subj',
      '/CN=Other Tool Signer',
    ]);
    await run('openssl', [
      'pkcs12',
      '-export',
      '-inkey',
      key,
      '-in',
      cert,
      '-out',
      p12,
      '-passout',
      'pass:pw',
    ]);
    const signedPath = join(dir, 'signed-by-mutool.pdf');
    await run('mutool', [
      'sign',
      '-s',
      p12,
      '-P',
      'pw',
      '-o',
      signedPath,
      fieldPath,
      String(withField.field),
    ]);
    const signedFirst = await readFile(signedPath);
    assert.match(await tool('mutool', ['sign', '-v', signedPath]), /The document is unchanged since signing/);

    const result = await signAndSealThroughApi(server, admin, space, signedFirst, 'other-tool-first');
    const final = result.signed.bytes.toString('latin1');
    assert.ok(final.startsWith(signedFirst.toString('latin1')), 'incremental updates of the signed file');

    const [first] = await pdfsig(result.signed.path);
    assert.equal(first?.validation, 'Signature is Valid.', first?.raw);
    assert.match(first?.raw ?? '', /Not total document signed/);
    const mutool = await tool('mutool', ['sign', '-v', result.signed.path]);
    const firstBlock = mutool
      .split(/(?=Verifying signature)/)
      .find((b) => b.startsWith('Verifying signature'));
    assert.match(firstBlock ?? mutool, /The signature is valid but there have been edits since signing/);

    const before = lastVersion(signedFirst.toString('latin1'), Number(pageNumber));
    const rewritten = lastVersion(final, Number(pageNumber), signedFirst.length);
    assert.ok(before && rewritten, 'Signery rewrote the page to add its visual');
    assert.ok(rewritten.includes(`/MediaBox${/\/MediaBox(\s*)/.exec(rewritten)![1]}${mediaBox}`), rewritten);
    assertEntriesKept(before, rewritten, 'the page signed by mutool, then by Signery');

    // Signery's own verifier agrees (issue 38): after mutool's signature came a signature with its
    // widget, and the seal; its catalog's /OpenAction, which names the page that got the widget, did
    // not change. Its signer is not confirmed (a self-signed certificate): unconfirmed, never changed.
    const report = await verifyFile(result.signed.bytes, { trustAnchors: [] });
    const byMutool = report.signatures.find((s) => s.fieldName === 'OtherTool');
    assert.ok(byMutool, report.signatures.map((s) => s.fieldName).join(', '));
    assert.deepEqual(
      byMutool.modifications.filter((m) => m.kind === 'other' || m.coversSignedContent),
      [],
      JSON.stringify(byMutool.modifications),
    );
    assert.equal(byMutool.verdict, 'indeterminate');
    assert.equal(report.verdict, 'unconfirmed', report.reason);
  });

  it('a LibreOffice form whose appearances the engine draws (the full parse rewrites the page) keeps its page text', async () => {
    const form = await libreOfficeForm(space, { value: 'Exact text' });
    const libre = form.bytes.toString('latin1');
    assert.match(libre, /\/NeedAppearances\s*true/);
    const pageMatch = /(\d+) 0 obj\s*(<<\/Type\/Page\/.*?)\s*endobj/s.exec(libre);
    assert.ok(pageMatch, 'LibreOffice wrote a page');
    const [, pageNumber] = pageMatch as unknown as [string, string];
    const page = lastVersion(libre, Number(pageNumber))!;
    assert.match(page, /\/MediaBox\s*\[0 0 595\.303937007874 841\.889763779528\]/);
    const result = await signAndSealThroughApi(server, admin, space, form.bytes, 'engine-path');
    const final = result.signed.bytes.toString('latin1');
    const rewritten = lastVersion(final, Number(pageNumber), form.bytes.length);
    assert.ok(rewritten, 'Signery rewrote the page to add its visual');
    assertEntriesKept(page, rewritten, 'the LibreOffice form page');
  });
});

/**
 * An incremental update adding an empty signature field on page `pageNumber`: the page gets a
 * direct /Annots with the widget (its other text as LibreOffice wrote it), the catalog an /AcroForm.
 */
function addSignatureField(pdf: string, pageNumber: number, page: string): { text: string; field: number } {
  const size = Number([...pdf.matchAll(/\/Size (\d+)/g)].at(-1)![1]);
  const startxref = Number([...pdf.matchAll(/startxref\s+(\d+)/g)].at(-1)![1]);
  const root = Number([...pdf.matchAll(/\/Root (\d+) 0 R/g)].at(-1)![1]);
  const catalog = lastVersion(pdf, root)!;
  const ids = [...pdf.matchAll(/\/ID\s*\[\s*(<[0-9A-Fa-f]+>)/g)].at(-1)?.[1];
  const field = size;
  const bodies = new Map<number, string>([
    [root, `${catalog.slice(0, -2)}/AcroForm<</Fields[${field} 0 R]/SigFlags 3>>>>`],
    [pageNumber, `${page.slice(0, -2)}/Annots[${field} 0 R]>>`],
    [field, `<</Type/Annot/Subtype/Widget/FT/Sig/T(OtherTool)/Rect[0 0 0 0]/F 132/P ${pageNumber} 0 R>>`],
  ]);
  let text = pdf.endsWith('\n') ? pdf : `${pdf}\n`;
  const offsets = new Map<number, number>();
  for (const [number, body] of [...bodies].sort((a, b) => a[0] - b[0])) {
    offsets.set(number, Buffer.byteLength(text, 'latin1'));
    text += `${number} 0 obj\n${body}\nendobj\n`;
  }
  const xref = Buffer.byteLength(text, 'latin1');
  text += 'xref\n0 1\n0000000000 65535 f \n';
  for (const [number, offset] of [...offsets].sort((a, b) => a[0] - b[0]))
    text += `${number} 1\n${String(offset).padStart(10, '0')} 00000 n \n`;
  text +=
    `trailer\n<</Size ${field + 1}/Root ${root} 0 R/Prev ${startxref}${ids ? `/ID[${ids}${ids}]` : ''}>>\n` +
    `startxref\n${xref}\n%%EOF\n`;
  return { text, field };
}
