import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { PDF } from '@libpdf/core';
import { damagedVariants } from '../fixtures/damaged-pdfs.js';
import { buildPdf } from '../fixtures/pdf-fixtures.js';
import {
  chromiumPrintToPdf,
  ghostscriptPages,
  ghostscriptPdf,
  ghostscriptPdfA2b,
  libreOfficeForm,
  qpdfEncrypt,
  qpdfRewrite,
} from '../fixtures/pdf-producers.js';
import { readDocument, signDocument, download } from '../helpers/documents.js';
import { anOwnerAndTwoSigners, IVY, JON } from '../helpers/people.js';
import { USER_PASSWORD } from '../helpers/server.js';
import { shareDocument } from '../helpers/sharing.js';
import { useServer } from '../helpers/use-server.js';
import {
  darkPixels,
  hasTool,
  nssDatabase,
  pdfsig,
  renderGrey,
  tool,
  useWorkspace,
  type GreyPage,
} from '../pdf/oracles.js';
import { createDocument } from './through-the-api.js';

/**
 * Issue 23: the files people actually send, made by the producers they use (Debian packages `.ci/run`
 * installs), each shared with two signers who sign with a visible signature at a place of their own on
 * page 1, completed and sealed, then checked by pdfsig (trusting the development CA through NSS),
 * MuPDF (`mutool sign -v`), qpdf --check, and renders of page 1 by poppler and MuPDF showing each
 * signature inside its box and nothing drawn anywhere else.
 *
 * One line per file is printed (`corpus: …`), for the closing note.
 */

type Box = { percentX: number; percentY: number; percentWidth: number; percentHeight: number };

/** Where each signer's box goes on page 1, in fractions of the page as displayed (spec: Position). */
const SIGNERS: { user: typeof IVY; box: Box }[] = [
  { user: IVY, box: { percentX: 0.22, percentY: 0.72, percentWidth: 0.3, percentHeight: 0.1 } },
  { user: JON, box: { percentX: 0.6, percentY: 0.72, percentWidth: 0.3, percentHeight: 0.1 } },
];

/** Two signatures and the seal made on completion (Contract: sealOnComplete). */
const SIGNATURES = SIGNERS.length + 1;

interface CorpusFile {
  name: string;
  /** The tools that make it. */
  tools: string[];
  make: () => Promise<Uint8Array>;
  pages: number;
  /** The upload is repaired (spec Files: `repaired`). */
  repaired?: boolean;
  /** Encrypted, and stays so. */
  encrypted?: boolean;
  /**
   * Has form fields whose values the viewers drew themselves (/NeedAppearances): the first signature's
   * revision gives them appearances (need-appearances.test.ts), so their widgets may change too.
   */
  form?: boolean;
}

const ORACLES = ['pdfsig', 'mutool', 'qpdf', 'pdftoppm'];

describe('files from real producers, each signed by two signers and sealed, pass pdfsig, MuPDF, qpdf and renders of page 1', () => {
  const server = useServer();
  const space = useWorkspace();
  let owner: string;
  const signers = new Map<string, string>();
  let nssDir: string | undefined;
  /** Each file as made by its producer (made once, in `before`). */
  const made = new Map<string, Uint8Array>();

  const ghostscript = () => ghostscriptPdf(space, ['Purchase agreement', 'Between the parties below']);
  const corpus: CorpusFile[] = [
    {
      name: 'LibreOffice Writer form (text field, check box, /NeedAppearances)',
      tools: ['soffice'],
      make: async () => (await libreOfficeForm(space, { value: 'Ada Lovelace' })).bytes,
      pages: 1,
      form: true,
    },
    {
      name: 'Ghostscript PDF/A-2b',
      tools: ['gs'],
      make: () => ghostscriptPdfA2b(space, ['Archived contract', 'PDF/A-2b']),
      pages: 1,
    },
    {
      name: 'Chromium print-to-PDF',
      tools: ['chromium'],
      make: () => chromiumPrintToPdf(space, OFFER_LETTER),
      pages: 1,
    },
    {
      name: 'qpdf object streams (Chromium)',
      tools: ['chromium'],
      make: async () =>
        qpdfRewrite(space, await chromiumPrintToPdf(space, OFFER_LETTER), ['--object-streams=generate']),
      pages: 1,
    },
    {
      name: 'qpdf linearized (LibreOffice form)',
      tools: ['soffice'],
      make: async () =>
        qpdfRewrite(space, (await libreOfficeForm(space, { value: 'Ada' })).bytes, ['--linearize']),
      pages: 1,
      form: true,
    },
    {
      name: 'qpdf AES-256, empty user password (Ghostscript)',
      tools: ['gs'],
      make: async () => qpdfEncrypt(space, await ghostscript(), { ownerPassword: 'owner', bits: 256 }),
      pages: 1,
      encrypted: true,
    },
    {
      name: 'repaired xref: every offset shifted (Ghostscript)',
      tools: ['gs'],
      make: async () => damagedVariants(await ghostscript()).find((v) => /every offset/.test(v.name))!.bytes,
      pages: 1,
      repaired: true,
    },
    {
      name: 'page 1 /Rotate 90 (qpdf --rotate, Ghostscript)',
      tools: ['gs'],
      make: async () => qpdfRewrite(space, await ghostscript(), ['--rotate=+90:1']),
      pages: 1,
    },
    {
      name: 'page 1 /Rotate 270 (qpdf --rotate, Ghostscript)',
      tools: ['gs'],
      make: async () => qpdfRewrite(space, await ghostscript(), ['--rotate=+270:1']),
      pages: 1,
    },
    {
      name: 'offset MediaBox [100 200 712 992], page 2 also /Rotate 270 (generated)',
      tools: [],
      make: async () =>
        buildPdf({
          pages: [
            {
              mediaBox: [100, 200, 712, 992],
              texts: [{ text: 'Offset MediaBox', x: 172, y: 920, size: 18 }],
            },
            {
              mediaBox: [100, 200, 712, 992],
              rotate: 270,
              texts: [{ text: 'Rotated and offset', x: 172, y: 920, size: 18 }],
            },
          ],
        }).bytes,
      pages: 2,
    },
    {
      name: '1,000 pages (Ghostscript)',
      tools: ['gs'],
      make: () => ghostscriptPages(space, 1000),
      pages: 1000,
    },
  ];
  const missingFor = (file: CorpusFile) => [...file.tools, ...ORACLES].filter((name) => !hasTool(name));

  before(async () => {
    owner = await anOwnerAndTwoSigners(server);
    for (const { user } of SIGNERS) signers.set(user.name, await server.login(user.name, USER_PASSWORD));
    const { devCa } = await server.app.deps.seal();
    // pdfsig trusts what its NSS database trusts: the development CA's root, which issued the seal.
    if (devCa) nssDir = await nssDatabase(space, devCa.rootCertificate);
    // One producer at a time: LibreOffice and Chromium each take a core.
    for (const file of corpus) if (missingFor(file).length === 0) made.set(file.name, await file.make());
  });

  for (const file of corpus) {
    const missing = missingFor(file);
    const skip = missing.length > 0 && `needs ${missing.join(', ')} (Debian packages .ci/run installs)`;
    it(
      `${file.name}: two visible signatures where they were placed and the seal; pdfsig, MuPDF and qpdf accept the file`,
      { skip },
      async () => {
        const bytes = made.get(file.name)!;
        const uploaded = await server.api('POST', '/files/saveFile', {
          token: owner,
          form: { file: { name: 'corpus.pdf', type: 'application/pdf', bytes: Buffer.from(bytes) } },
        });
        assert.equal(uploaded.status, 200, uploaded.text);
        const upload = uploaded.body.file;
        assert.equal(upload.pages, file.pages);
        assert.equal(Boolean(upload.repaired), Boolean(file.repaired), JSON.stringify(upload.repaired));
        const created = await createDocument(server, owner, upload.id as string, file.name);
        assert.equal(created.status, 200, created.text);
        const id = created.body.results[0].documentId as string;
        await shareDocument(server, owner, id, {
          to: SIGNERS.map(({ user }) => ({ sharePurpose: 'sign', shareTo: user.name })),
        });
        for (const [i, { user, box }] of SIGNERS.entries()) {
          const signed = await signDocument(
            server,
            signers.get(user.name)!,
            id,
            [{ type: 'signature', pages: [1], position: box, decorationType: 'frame' }],
            owner,
          );
          assert.equal(signed.status, 200, signed.text);
          assert.equal(signed.body.shareStateName, i === SIGNERS.length - 1 ? 'completed' : 'inprogress');
        }
        const doc = await readDocument(server, owner, id);
        assert.equal(doc.workflow.shareStateName, 'completed');
        const before = await space.write(`${id}-uploaded.pdf`, await download(server, owner, upload.id));
        const after = await space.write(
          `${id}-final.pdf`,
          await download(server, owner, doc.pdfFile.content),
        );

        const checked = {
          pdfsig: await pdfsigVerdict(after, nssDir),
          mupdf: await mupdfVerdict(after),
          qpdf: await qpdfVerdict(after),
          placement: await placementVerdict(before, after, file.form ? await formWidgets(bytes) : []),
          encrypted: /File is not encrypted/.test(await tool('qpdf', ['--show-encryption', after]))
            ? 'no'
            : 'yes',
        };
        const line =
          `corpus: ${file.name} | pages ${upload.pages}${file.repaired ? ' | repaired at upload' : ''}` +
          `${file.encrypted ? ` | still encrypted: ${checked.encrypted}` : ''}` +
          ` | pdfsig ${checked.pdfsig.summary} | MuPDF ${checked.mupdf.summary} | qpdf --check ${checked.qpdf.summary}` +
          ` | placement ${checked.placement.summary}`;
        console.log(line);

        assert.deepEqual(checked.pdfsig.problems, [], checked.pdfsig.raw);
        assert.deepEqual(checked.mupdf.problems, [], checked.mupdf.raw);
        assert.deepEqual(checked.qpdf.problems, [], checked.qpdf.raw);
        assert.deepEqual(checked.placement.problems, []);
        if (file.encrypted) assert.equal(checked.encrypted, 'yes', 'the signed file keeps its encryption');
      },
    );
  }
});

interface Verdict {
  summary: string;
  problems: string[];
  raw?: string;
}

/**
 * pdfsig (with the development CA's root in its NSS database): SIGNATURES signatures, each "Signature is
 * Valid." (digest and CMS signature). What it says of the certificates is reported, not asserted: for
 * the test server's development CA, whose seal names revocation services at PUBLIC_URL
 * (http://localhost:0 in tests), poppler 22.12 answers "Unknown issue with Certificate or corrupted
 * data." even with -no-ocsp, while NSS's vfychain finds the chain good.
 */
async function pdfsigVerdict(path: string, nssDir: string | undefined): Promise<Verdict> {
  const verdicts = await pdfsig(path, nssDir);
  const valid = verdicts.filter((v) => v.validation === 'Signature is Valid.').length;
  const problems: string[] = [];
  if (verdicts.length !== SIGNATURES) problems.push(`${verdicts.length} signatures, not ${SIGNATURES}`);
  if (valid !== verdicts.length) problems.push(`${verdicts.length - valid} not valid`);
  const certificates = [...new Set(verdicts.map((v) => v.certificate))].join(' / ');
  return {
    summary: `${valid}/${verdicts.length} valid (certificate: ${nssDir ? certificates : 'no NSS database'})`,
    problems,
    raw: verdicts.map((v) => v.raw).join('\n'),
  };
}

/**
 * `mutool sign -v`: SIGNATURES signatures verified, each "valid" (edits after it for all but the last,
 * which are the later signatures' incremental updates) and none with a digest failure.
 */
async function mupdfVerdict(path: string): Promise<Verdict> {
  const raw = await tool('mutool', ['sign', '-v', path]);
  const verified = raw.match(/Verifying signature/g)?.length ?? 0;
  const valid =
    raw.match(/The signature is valid but there have been edits|The document is unchanged since signing/g)
      ?.length ?? 0;
  const problems: string[] = [];
  if (verified !== SIGNATURES) problems.push(`${verified} signatures verified, not ${SIGNATURES}`);
  if (valid !== verified) problems.push(`${verified - valid} not valid`);
  if (/not valid|digest (error|mismatch|failure)|Signature is invalid/i.test(raw))
    problems.push('a digest or signature failure');
  return { summary: `${valid}/${verified} valid`, problems, raw };
}

/** `qpdf --check`: no syntax or stream error, no warning. */
async function qpdfVerdict(path: string): Promise<Verdict> {
  const raw = await tool('qpdf', ['--check', path]);
  const problems: string[] = [];
  if (!/No syntax or stream encoding errors found/.test(raw)) problems.push('errors found');
  if (/WARNING|error:/i.test(raw)) problems.push('warnings');
  return { summary: problems.length === 0 ? 'clean' : problems.join(', '), problems, raw };
}

/**
 * Page 1 rendered before and after signing, by poppler and by MuPDF, at the size it is displayed
 * (/Rotate applied, the MediaBox's origin wherever it is): each signer's box, blank before, has the
 * signature drawn in it after, and no pixel changed outside the boxes (and the form's `widgets`); MuPDF
 * reads each signer's name upright, left to right, inside their box.
 * Positions are fractions of the displayed page, so they map onto the render's pixels directly.
 */
async function placementVerdict(before: string, after: string, widgets: Box[]): Promise<Verdict> {
  const problems: string[] = [];
  const seen: string[] = [];
  for (const viewer of ['poppler', 'mupdf'] as const) {
    const was = await renderGrey(before, viewer);
    const is = await renderGrey(after, viewer);
    if (was.width !== is.width || was.height !== is.height) {
      problems.push(`${viewer}: page size changed`);
      continue;
    }
    const drawn = SIGNERS.map(({ user, box }) => {
      const blank = darkPixels(was, box) === 0;
      const ink = darkPixels(is, box);
      if (!blank) problems.push(`${viewer}: ${user.name}'s box is not blank before signing`);
      if (ink < 50) problems.push(`${viewer}: ${user.name}'s box has ${ink} dark pixels`);
      return ink;
    });
    const outside = changedOutside(was, is, [...SIGNERS.map((s) => s.box), ...widgets]);
    if (outside > 0) problems.push(`${viewer}: ${outside} pixels changed outside the boxes`);
    seen.push(`${viewer} ${was.width}x${was.height}px, ink ${drawn.join('+')}, ${outside} changed outside`);
  }
  const lines = await textLines(after);
  const misread = SIGNERS.flatMap(({ user, box }) => {
    const name = lines.find((line) => line.text === user.displayName);
    if (!name) return [`MuPDF finds no line "${user.displayName}" on page 1`];
    if (name.dir !== '1 0') return [`${user.name}'s name runs along ${name.dir}, not upright`];
    return inside(name.centre, box) ? [] : [`${user.name}'s name is outside the box`];
  });
  problems.push(...misread);
  if (misread.length === 0) seen.push('MuPDF reads each name upright in its box');
  const verdict = problems.length === 0 ? 'ok' : `FAILED: ${problems.join(', ')}`;
  return { summary: `${verdict} (${seen.join('; ')})`, problems };
}

/**
 * Page 1's text lines as MuPDF extracts them (`mutool draw -F stext`, on the page as displayed): their
 * text, writing direction (`1 0`: left to right, upright) and centre as fractions of the page.
 */
async function textLines(path: string): Promise<{ text: string; dir: string; centre: [number, number] }[]> {
  const xml = await tool('mutool', ['draw', '-q', '-F', 'stext', '-o', '-', path, '1']);
  const page = /<page [^>]*width="([\d.]+)" height="([\d.]+)"/.exec(xml);
  if (!page) return [];
  const [width, height] = [Number(page[1]), Number(page[2])];
  return [...xml.matchAll(/<line bbox="([^"]+)"[^>]*dir="([^"]+)">([\s\S]*?)<\/line>/g)].map((line) => {
    const [x0, y0, x1, y1] = line[1]!.split(' ').map(Number) as [number, number, number, number];
    const text = [...line[3]!.matchAll(/ c="([^"]*)"/g)].map((c) => c[1]).join('');
    return { text, dir: line[2]!, centre: [(x0 + x1) / 2 / width, (y0 + y1) / 2 / height] };
  });
}

function inside([x, y]: [number, number], box: Box): boolean {
  const { percentX, percentY, percentWidth, percentHeight } = box;
  return x > percentX && x < percentX + percentWidth && y > percentY && y < percentY + percentHeight;
}

/** Pixels whose grey differs by more than a quarter between the renders, outside every box (±2 px). */
function changedOutside(was: GreyPage, is: GreyPage, boxes: Box[]): number {
  const areas = boxes.map((box) => pixelsOf(was, box, 2));
  let changed = 0;
  for (let y = 0; y < was.height; y++) {
    for (let x = 0; x < was.width; x++) {
      const i = y * was.width + x;
      if (Math.abs(was.pixels[i]! - is.pixels[i]!) <= 64) continue;
      if (!areas.some((a) => x >= a.x0 && x < a.x1 && y >= a.y0 && y < a.y1)) changed++;
    }
  }
  return changed;
}

/**
 * The boxes of page 1's form field widgets, as fractions of the displayed page (read with @libpdf/core
 * from a page that is neither rotated nor offset, as LibreOffice writes them).
 */
async function formWidgets(bytes: Uint8Array): Promise<Box[]> {
  const pdf = await PDF.load(bytes);
  const page = pdf.getPages()[0]!;
  const media = page.getMediaBox();
  assert.deepEqual([page.rotation, media.x, media.y], [0, 0, 0], 'an upright page from the origin');
  return pdf
    .getForm()!
    .acroForm()
    .getFields()
    .flatMap((field) => field.getWidgets())
    .map((widget) => {
      const [x1, y1, x2, y2] = widget.rect;
      return {
        percentX: Math.min(x1, x2) / media.width,
        percentY: 1 - Math.max(y1, y2) / media.height,
        percentWidth: Math.abs(x2 - x1) / media.width,
        percentHeight: Math.abs(y2 - y1) / media.height,
      };
    });
}

function pixelsOf(page: GreyPage, box: Box, margin: number) {
  return {
    x0: Math.max(0, Math.floor(box.percentX * page.width) - margin),
    y0: Math.max(0, Math.floor(box.percentY * page.height) - margin),
    x1: Math.min(page.width, Math.ceil((box.percentX + box.percentWidth) * page.width) + margin),
    y1: Math.min(page.height, Math.ceil((box.percentY + box.percentHeight) * page.height) + margin),
  };
}

const OFFER_LETTER = `<!doctype html>
<html><head><meta charset="utf-8"><title>Offer letter</title>
<style>body { font-family: sans-serif; margin: 2cm } h1 { color: #234 } td { border: 1px solid #999; padding: 4px }</style>
</head><body>
<h1>Offer letter</h1>
<p>Dear Ada, we are pleased to offer you the position described below.</p>
<table><tr><td>Start</td><td>1 March</td></tr><tr><td>Salary</td><td>100,000</td></tr></table>
</body></html>
`;
