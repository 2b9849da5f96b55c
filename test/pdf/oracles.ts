import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pem } from '../../src/pki/dev-ca.js';
import { openPdf } from '../../src/pdf/open-pdf.js';
import { findSignatures } from '../../src/pdf/find-signatures.js';
import { useStarted } from '../helpers/use-server.js';

/**
 * The verification oracles of DESIGN (pdfsig, mutool, qpdf, openssl) run on files our engine made,
 * so the tests do not grade our output with our own reader alone.
 */

const run = promisify(execFile);

/** Whether a command-line tool is installed (tests skip with a message when it is not). */
export function hasTool(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
}

export interface Workspace {
  dir: string;
  write(name: string, bytes: Uint8Array | string): Promise<string>;
  remove(): Promise<void>;
}

export async function workspace(): Promise<Workspace> {
  const dir = await mkdtemp(join(tmpdir(), 'signery-pdf-'));
  return {
    dir,
    async write(name, bytes) {
      const path = join(dir, name);
      await writeFile(path, bytes);
      return path;
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** A workspace for the enclosing describe, made in its `before` hook and removed in its `after` hook. */
export function useWorkspace(): Workspace {
  return useStarted('the workspace', workspace, (space) => space.remove());
}

/** Runs a tool and returns stdout+stderr whatever its exit code (pdfsig exits non-zero on bad signatures). */
export async function tool(command: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(command, args, { maxBuffer: 32 * 1024 * 1024 });
    return stdout + stderr;
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; code?: number };
    return `${failed.stdout ?? ''}${failed.stderr ?? ''}\n[exit ${failed.code ?? '?'}]`;
  }
}

/** pdfsig's verdict per signature, in file order. */
export async function pdfsig(
  path: string,
  nssDir?: string,
): Promise<{ validation: string; certificate: string; raw: string }[]> {
  const raw = await tool('pdfsig', [...(nssDir ? ['-nssdir', nssDir] : []), path]);
  return raw
    .split(/\nSignature #\d+:\n/)
    .slice(1)
    .map((block) => ({
      validation: /Signature Validation: (.*)/.exec(block)?.[1]?.trim() ?? '',
      certificate: /Certificate Validation: (.*)/.exec(block)?.[1]?.trim() ?? '',
      raw: block,
    }));
}

/** An NSS database trusting `root` as a CA, for `pdfsig -nssdir`. Undefined without certutil. */
export async function nssDatabase(space: Workspace, root: Uint8Array): Promise<string | undefined> {
  if (!hasTool('certutil')) return undefined;
  const dir = join(space.dir, 'nss');
  await run('mkdir', ['-p', dir]);
  await run('certutil', ['-N', '-d', `sql:${dir}`, '--empty-password']);
  const rootPath = await space.write('nss-root.pem', pem('CERTIFICATE', root));
  await run('certutil', ['-A', '-d', `sql:${dir}`, '-n', 'signery-root', '-t', 'CT,C,C', '-i', rootPath]);
  return `sql:${dir}`;
}

/**
 * Writes each signature's CMS and signed byte ranges to files, for `openssl cms -verify -binary
 * -inform DER -content <ranges>`.
 */
export async function extractSignatures(
  space: Workspace,
  pdf: Uint8Array,
  prefix: string,
): Promise<{ fieldName: string; type: string; cms: string; content: string }[]> {
  const opened = await openPdf({ bytes: pdf });
  const result = [];
  let i = 0;
  for (const signature of findSignatures({ opened })) {
    const [a, b, c, d] = signature.byteRange as [number, number, number, number];
    const content = Buffer.concat([pdf.subarray(a, a + b), pdf.subarray(c, c + d)]);
    result.push({
      fieldName: signature.fieldName,
      type: signature.type,
      cms: await space.write(`${prefix}-${i}.p7s`, signature.contents),
      content: await space.write(`${prefix}-${i}.bin`, content),
    });
    i++;
  }
  return result;
}

/** `openssl cms -verify` of one extracted signature against a CA file; true when OpenSSL accepts it. */
export async function opensslVerifies(
  signature: { cms: string; content: string },
  caFile: string,
): Promise<boolean> {
  const out = await tool('openssl', [
    'cms',
    '-verify',
    '-binary',
    '-inform',
    'DER',
    '-in',
    signature.cms,
    '-content',
    signature.content,
    '-CAfile',
    caFile,
    '-purpose',
    'any',
    '-out',
    '/dev/null',
  ]);
  return out.includes('Verification successful');
}

/** `openssl ts -verify` of one extracted document timestamp against a CA file: what OpenSSL says. */
export function opensslTsVerify(
  timestamp: { cms: string; content: string },
  caFile: string,
): Promise<string> {
  return tool('openssl', [
    'ts',
    '-verify',
    '-data',
    timestamp.content,
    '-in',
    timestamp.cms,
    '-token_in',
    '-CAfile',
    caFile,
  ]);
}

/**
 * pdfsig, when installed, finds `count` signatures in the file and calls each valid; with `qpdf`,
 * `qpdf --check`, when installed, finds no syntax or stream error.
 */
export async function assertSignaturesValid(
  path: string,
  count: number,
  options: { qpdf?: boolean } = {},
): Promise<void> {
  if (hasTool('pdfsig')) {
    const verdicts = await pdfsig(path);
    assert.equal(verdicts.length, count, `pdfsig sees ${count} signatures`);
    for (const v of verdicts) assert.equal(v.validation, 'Signature is Valid.', v.raw);
  }
  if (options.qpdf && hasTool('qpdf'))
    assert.match(await tool('qpdf', ['--check', path]), /No syntax or stream encoding errors found/);
}

/**
 * The three oracles of DESIGN agree that a signed file is sound: pdfsig finds `count` signatures and
 * calls each valid, `mutool sign -v` verifies as many with no digest or signature failure, and
 * `qpdf --check` finds no error or warning.
 */
export async function assertOraclesAccept(path: string, count: number): Promise<void> {
  const verdicts = await pdfsig(path);
  assert.equal(verdicts.length, count, `pdfsig sees ${count} signatures`);
  for (const verdict of verdicts) assert.equal(verdict.validation, 'Signature is Valid.', verdict.raw);
  const mutool = await tool('mutool', ['sign', '-v', path]);
  assert.equal(mutool.match(/Verifying signature/g)?.length, count, mutool);
  // "valid but there have been edits since signing" for all but the last, "unchanged" for the last.
  assert.equal(
    mutool.match(/The signature is valid but there have been edits|The document is unchanged since signing/g)
      ?.length,
    count,
    mutool,
  );
  assert.doesNotMatch(mutool, /not valid|digest (error|mismatch)/i, mutool);
  const qpdf = await tool('qpdf', ['--check', path]);
  assert.match(qpdf, /No syntax or stream encoding errors found/, qpdf);
  assert.doesNotMatch(qpdf, /WARNING|error:/i, qpdf);
}

/** A page rendered in grey by a viewer: poppler (`pdftoppm`) or MuPDF (`mutool draw`). */
export interface GreyPage {
  width: number;
  height: number;
  /** One byte per pixel, rows from the top. */
  pixels: Uint8Array;
}

/** Renders page `page` of `path` in grey at `dpi` with poppler or MuPDF (both write a binary PGM). */
export async function renderGrey(
  path: string,
  viewer: 'poppler' | 'mupdf',
  dpi = 50,
  page = 1,
): Promise<GreyPage> {
  const out = `${path}.${viewer}.pgm`;
  if (viewer === 'poppler') {
    await run('pdftoppm', [
      '-gray',
      '-r',
      String(dpi),
      '-f',
      String(page),
      '-l',
      String(page),
      '-singlefile',
      path,
      path + '.poppler',
    ]);
  } else {
    await run('mutool', ['draw', '-q', '-c', 'gray', '-r', String(dpi), '-o', out, path, String(page)]);
  }
  return readPgm(await readFile(out));
}

function readPgm(bytes: Buffer): GreyPage {
  // P5 <width> <height> <maxval> then one byte per pixel (comments are not written by either tool).
  const header = /^P5\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(bytes.subarray(0, 64).toString('latin1'));
  if (!header) throw new Error('not a binary PGM');
  const [whole, width, height] = header;
  return {
    width: Number(width),
    height: Number(height),
    pixels: new Uint8Array(bytes.subarray(whole.length)),
  };
}

/** Pixels darker than mid-grey inside a box given as page fractions from the top-left corner. */
export function darkPixels(
  page: GreyPage,
  box: { percentX: number; percentY: number; percentWidth: number; percentHeight: number },
): number {
  const x0 = Math.floor(box.percentX * page.width);
  const y0 = Math.floor(box.percentY * page.height);
  const x1 = Math.ceil((box.percentX + box.percentWidth) * page.width);
  const y1 = Math.ceil((box.percentY + box.percentHeight) * page.height);
  let dark = 0;
  for (let y = y0; y < y1; y++)
    for (let x = x0; x < x1; x++) if (page.pixels[y * page.width + x]! < 128) dark++;
  return dark;
}
