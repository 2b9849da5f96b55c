import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { PdfArray, PdfName } from '@libpdf/core';
import { PDF, PdfDict } from '@libpdf/core';
import { signPdf, type SignPdfResult } from '../../src/pdf/sign-pdf.js';
import { verifyPdf } from '../../src/pdf/verify-pdf.js';
import { qrPng } from '../../src/pdf/barcode.js';
import { openDevCa, pem, type DevCa } from '../../src/pki/dev-ca.js';
import type { Signer } from '../../src/pki/signers/signer.js';
import { geometryPdf, manyPagesPdf, onePagePdf } from '../fixtures/pdf-fixtures.js';
import { createTestPki, type TestPki } from '../fixtures/test-pki.js';
import {
  extractSignatures,
  hasTool,
  nssDatabase,
  opensslVerifies,
  pdfsig,
  darkPixels,
  renderGrey,
  tool,
  workspace,
  type Workspace,
} from './oracles.js';

const position = (x: number) => ({ percentX: x, percentY: 0.8, percentWidth: 0.2, percentHeight: 0.08 });

describe('signing: three signers in a row, then the organisation seal', () => {
  let space: Workspace;
  let devCa: DevCa;
  let pki: TestPki;
  let signers: Signer[];
  let png: Uint8Array;
  const results: SignPdfResult[] = [];
  let revisions: Uint8Array[] = [];
  let caFile: string;

  before(async () => {
    space = await workspace();
    const dataDir = await mkdtemp(join(tmpdir(), 'signery-devca-'));
    devCa = await openDevCa({ dir: join(dataDir, 'pki') });
    after(() => rm(dataDir, { recursive: true, force: true }));
    pki = await createTestPki();
    signers = [
      await pki.signer({ name: 'Ada Lovelace' }),
      await pki.signer({ name: 'Grace Hopper', key: 'ECDSA' }),
      await pki.signer({ name: 'Alan Turing' }),
    ];
    png = await qrPng({ text: 'https://signery.example/documents/1' });
    caFile = await space.write(
      'ca.pem',
      [pki.root.certificate, pki.intermediate.certificate, devCa.rootCertificate]
        .map((c) => pem('CERTIFICATE', c))
        .join(''),
    );
    let pdf = onePagePdf().bytes;
    revisions = [pdf];
    for (const [i, signer] of signers.entries()) {
      const result = await signPdf({
        pdf,
        signer,
        // What a signing service checks before signing (issue 38), signed into the CMS.
        signerStatus: await pki.status(),
        reason: 'I agree',
        location: 'Brussels',
        signatures: [
          {
            type: 'signature',
            pages: [1],
            position: position(0.05 + i * 0.3),
            image: png,
            timestamp: true,
            decorationType: 'frame',
          },
        ],
        annotations: [
          {
            text: `Approved by signer ${i + 1}`,
            pages: [1],
            position: { percentX: 0.05 + i * 0.3, percentY: 0.7, percentWidth: 0.25, percentHeight: 0.05 },
            align: 'center',
            color: '#003366',
            backgroundColor: '#ffee0080',
          },
        ],
      });
      results.push(result);
      pdf = result.pdf;
      revisions.push(pdf);
    }
    const seal = await signPdf({
      pdf,
      signer: devCa.sealSigner,
      signerStatus: { crls: [await devCa.issueCrl()], ocsps: [], warnings: [] },
      reason: 'Sealed by the organisation',
    });
    results.push(seal);
    revisions.push(seal.pdf);
  });
  after(() => space.remove());

  it('appends every change as an incremental update: each earlier file is a byte-for-byte prefix (DESIGN)', () => {
    for (let i = 1; i < revisions.length; i++) {
      const previous = revisions[i - 1]!;
      assert.ok(
        Buffer.from(revisions[i]!.subarray(0, previous.length)).equals(Buffer.from(previous)),
        `revision ${i}`,
      );
    }
  });

  it(
    'pdfsig reports "Signature is Valid." for all four signatures',
    { skip: !hasTool('pdfsig') && 'pdfsig (poppler-utils) is not installed' },
    async () => {
      const final = await space.write('final.pdf', results[3]!.pdf);
      const nss = await nssDatabase(space, devCa.rootCertificate);
      const verdicts = await pdfsig(final, nss);
      assert.equal(verdicts.length, 4);
      for (const verdict of verdicts) assert.equal(verdict.validation, 'Signature is Valid.', verdict.raw);
      if (nss)
        assert.equal(
          verdicts[3]!.certificate,
          'Certificate is Trusted.',
          'the seal chains to the dev CA in the NSS db',
        );
      // Every intermediate file too: each signature is valid in the file it was made in.
      for (const [i, result] of results.entries()) {
        const path = await space.write(`rev-${i}.pdf`, result.pdf);
        const all = await pdfsig(path);
        assert.equal(all.length, i + 1);
        assert.ok(all.every((v) => v.validation === 'Signature is Valid.'));
      }
    },
  );

  it(
    'qpdf --check finds no problem in any revision',
    { skip: !hasTool('qpdf') && 'qpdf is not installed' },
    async () => {
      for (const [i, result] of results.entries()) {
        const path = await space.write(`qpdf-${i}.pdf`, result.pdf);
        const out = await tool('qpdf', ['--check', path]);
        assert.match(out, /No syntax or stream encoding errors found/, out);
        assert.doesNotMatch(out, /WARNING|error:/i, out);
      }
    },
  );

  it(
    'mutool sign -v lists the four signatures as valid',
    { skip: !hasTool('mutool') && 'mutool (mupdf-tools) is not installed' },
    async () => {
      const path = await space.write('mutool.pdf', results[3]!.pdf);
      const out = await tool('mutool', ['sign', '-v', path]);
      assert.equal(out.match(/Verifying signature/g)?.length, 4, out);
      // mutool checks the digest and signature; the three signers see later edits (the next revisions).
      assert.equal(
        out.match(/The signature is valid but there have been edits since signing/g)?.length,
        3,
        out,
      );
      assert.equal(out.match(/The document is unchanged since signing/g)?.length, 1, out);
      assert.doesNotMatch(out, /signature is not valid|digest mismatch/i, out);
    },
  );

  it(
    'openssl cms -verify accepts each extracted CMS over its signed byte ranges',
    { skip: !hasTool('openssl') && 'openssl is not installed' },
    async () => {
      const extracted = await extractSignatures(space, results[3]!.pdf, 'final');
      assert.equal(extracted.length, 4);
      for (const signature of extracted)
        assert.ok(await opensslVerifies(signature, caFile), signature.fieldName);
    },
  );

  it('our verifier: intact, signer and /Name, claimed time, coverage and PAdES B-B', async () => {
    const { signatures } = await verifyPdf({
      pdf: results[3]!.pdf,
      trustAnchors: [pki.root.certificate, devCa.rootCertificate],
    });
    assert.deepEqual(
      signatures.map((s) => [
        s.fieldName,
        s.signer?.commonName,
        s.signerName,
        s.revisionsAfter,
        s.coversWholeFile,
      ]),
      [
        ['Signature1', 'Ada Lovelace', 'Ada Lovelace', 3, false],
        ['Signature2', 'Grace Hopper', 'Grace Hopper', 2, false],
        ['Signature3', 'Alan Turing', 'Alan Turing', 1, false],
        ['Signature4', 'Signery seal', 'Signery seal', 0, true],
      ],
    );
    for (const s of signatures) {
      assert.equal(s.indication, 'TOTAL_PASSED', JSON.stringify(s.problems));
      assert.ok(s.digestValid && s.signatureValid && s.byteRangeValid && s.certificate.trusted);
      assert.equal(s.level, 'B-B');
      assert.ok(s.claimedSigningTime);
      assert.deepEqual(
        s.warnings.filter((w) => !w.startsWith('No revocation')),
        [],
      );
    }
  });

  it('PAdES signed attributes: content-type, message-digest, signing-certificate-v2, the revocation status checked before signing (adbe-revocationInfoArchival, issue 38) and no signing-time (DESIGN)', async () => {
    const { signatures } = await verifyPdf({ pdf: results[3]!.pdf });
    for (const s of signatures) {
      const cms = s.evidence.cms!;
      assert.deepEqual(
        [...cms.signedAttributeValues.keys()].sort(),
        [
          '1.2.840.113549.1.9.16.2.47',
          '1.2.840.113549.1.9.3',
          '1.2.840.113549.1.9.4',
          '1.2.840.113583.1.1.8',
        ].sort(),
      );
      assert.equal(cms.signingTime, undefined);
      assert.equal(s.subFilter, 'ETSI.CAdES.detached');
    }
  });

  it('reserves at least 16 KB for /Contents (DESIGN) and keeps the DER length readable', async () => {
    for (const result of results) {
      const opened = await PDF.load(result.pdf);
      const last = (await verifyPdf({ pdf: result.pdf })).signatures.at(-1)!;
      const gap = last.byteRange[2]! - last.byteRange[1]! - 2;
      assert.ok(gap >= 16 * 1024 * 2, `placeholder ${gap / 2} bytes`);
      assert.ok(opened.getPageCount() === 1);
    }
  });

  it("visuals are annotations with appearance streams in the signer's revision, never page content (DESIGN)", async () => {
    const original = await PDF.load(revisions[0]!);
    const originalContents = original.getPage(0)!.dict.get('Contents');
    for (let i = 1; i <= 3; i++) {
      const pdf = await PDF.load(revisions[i]!);
      const page = pdf.getPage(0)!;
      assert.deepEqual(page.dict.get('Contents'), originalContents, 'page content untouched');
      const annots = page.dict.get('Annots', (ref) => pdf.getObject(ref)) as PdfArray;
      const dicts = annots.toArray().map((ref) => pdf.getObject(ref as never) as PdfDict);
      // Per signer a signature widget showing the image; the first signer's text is a FreeText
      // annotation, a later signer's is drawn in its widget (a signature after another adds only its
      // field and widget: strict validators refuse any other new annotation).
      const widgets = dicts.filter((d) => (d.get('Subtype') as PdfName).value === 'Widget');
      const texts = dicts.filter((d) => (d.get('Subtype') as PdfName).value === 'FreeText');
      assert.equal(widgets.length, i);
      assert.equal(texts.length, 1);
      for (const d of [...widgets, ...texts]) assert.ok(d.get('AP') instanceof PdfDict, 'has /AP');
    }
  });
});

describe('a signature after another: its visuals on its widget’s page are drawn in the widget', () => {
  const box = (percentX: number, percentY: number, percentWidth = 0.3, percentHeight = 0.06) => ({
    percentX,
    percentY,
    percentWidth,
    percentHeight,
  });
  const signature = box(0.1, 0.15);
  const text = box(0.55, 0.55);
  const picture = box(0.1, 0.8, 0.12, 0.08);

  it('on a page turned 90°: one widget spans signature, text and image; nothing else is added; every viewer draws each where it was placed; the earlier signature stays valid with only a later signature after it', async () => {
    const space = await workspace();
    try {
      const pki = await createTestPki();
      const first = await signPdf({
        pdf: geometryPdf().bytes,
        signer: await pki.signer({ name: 'First Signer' }),
        signerStatus: await pki.status(),
        signatures: [{ type: 'signature', pages: [1], position: position(0.1) }],
      });
      const black = await qrPng({ text: 'a picture of the second signer' });
      const second = await signPdf({
        pdf: first.pdf,
        signer: await pki.signer({ name: 'Second Signer' }),
        signerStatus: await pki.status(),
        signatures: [{ type: 'signature', pages: [2], position: signature, decorationType: 'frame' }],
        annotations: [
          { text: 'AGREED AND ACCEPTED', pages: [2], position: text, fontSize: 14, color: '#000000' },
        ],
        images: [{ pages: [2], position: picture, image: black }],
      });
      const pdf = await PDF.load(second.pdf);
      const annots = (page: number) =>
        (
          (
            pdf.getPage(page)!.dict.get('Annots', (ref) => pdf.getObject(ref)) as PdfArray | undefined
          )?.toArray() ?? []
        ).map((ref) => pdf.getObject(ref as never) as PdfDict);
      const added = annots(1);
      assert.deepEqual(
        added.map((d) => (d.get('Subtype') as PdfName).value),
        ['Widget'],
        'the page gets the signature widget only',
      );
      // Its /Rect spans the three visuals (a page turned 90°: displayed x runs up user-space y).
      const rect = (added[0]!.get('Rect') as PdfArray)
        .toArray()
        .map((n) => (n as unknown as { value: number }).value);
      assert.ok(
        rect[2]! - rect[0]! > 0.5 * 612 || rect[3]! - rect[1]! > 0.5 * 612,
        `spans them all: ${rect.join(' ')}`,
      );

      const { signatures } = await verifyPdf({ pdf: second.pdf, trustAnchors: [pki.root.certificate] });
      assert.deepEqual(
        signatures[0]!.modifications.map((m) => m.kind),
        ['signature'],
        JSON.stringify(signatures[0]!.modifications),
      );
      assert.deepEqual(
        signatures.map((s) => [s.verdict, s.indication]),
        [
          ['valid', 'TOTAL_PASSED'],
          ['valid', 'TOTAL_PASSED'],
        ],
      );
      const path = await space.write('composed.pdf', second.pdf);
      if (hasTool('pdfsig')) {
        const verdicts = await pdfsig(path);
        assert.deepEqual(
          verdicts.map((v) => v.validation),
          ['Signature is Valid.', 'Signature is Valid.'],
        );
      }
      for (const viewer of ['poppler', 'mupdf'] as const) {
        if (!hasTool(viewer === 'poppler' ? 'pdftoppm' : 'mutool')) continue;
        const page = await renderGrey(path, viewer, 72, 2);
        for (const [name, at] of Object.entries({ signature, text, picture }))
          assert.ok(darkPixels(page, at) > 20, `${viewer} draws the ${name} where it was placed`);
        // ...and nothing where none was placed (between them).
        assert.equal(darkPixels(page, box(0.55, 0.8, 0.3, 0.08)), 0, `${viewer}: an empty area stays empty`);
      }
    } finally {
      await space.remove();
    }
  });
});

describe('signing documents with object streams, rotated pages and an offset CropBox', () => {
  it('signs incrementally with an xref stream and stays valid for pdfsig and qpdf', async () => {
    const space = await workspace();
    try {
      const pki = await createTestPki();
      const signer = await pki.signer({ name: 'Rotated Signer' });
      const png = await qrPng({ text: 'rotated' });
      const base = geometryPdf({ objectStreams: true }).bytes;
      const { pdf } = await signPdf({
        pdf: base,
        signer,
        signerStatus: await pki.status(),
        signatures: [{ type: 'initials', pages: [1, 2, 3, 4, 5], position: position(0.7), image: png }],
      });
      assert.ok(Buffer.from(pdf.subarray(0, base.length)).equals(Buffer.from(base)));
      const tail = Buffer.from(pdf.subarray(base.length)).toString('latin1');
      assert.match(tail, /\/Type \/XRef/, 'the update writes a cross-reference stream like the original');
      const { signatures } = await verifyPdf({ pdf, trustAnchors: [pki.root.certificate] });
      assert.equal(signatures[0]!.indication, 'TOTAL_PASSED');
      if (hasTool('pdfsig')) {
        const [verdict] = await pdfsig(await space.write('os.pdf', pdf));
        assert.equal(verdict!.validation, 'Signature is Valid.');
      }
      if (hasTool('qpdf')) {
        const out = await tool('qpdf', ['--check', await space.write('os-check.pdf', pdf)]);
        assert.match(out, /No syntax or stream encoding errors found/, out);
      }
    } finally {
      await space.remove();
    }
  });

  it(
    'signs a linearized PDF incrementally (the library refuses incremental saves of linearized files)',
    { skip: !hasTool('qpdf') && 'qpdf is needed to linearize the generated fixture' },
    async () => {
      const space = await workspace();
      try {
        const source = await space.write('plain.pdf', manyPagesPdf(20).bytes);
        const linearized = `${space.dir}/linearized.pdf`;
        await tool('qpdf', ['--linearize', source, linearized]);
        const base = new Uint8Array(await readFile(linearized));
        const pki = await createTestPki();
        const { pdf } = await signPdf({
          pdf: base,
          signer: await pki.signer({ name: 'Linear' }),
          signerStatus: await pki.status(),
        });
        assert.ok(Buffer.from(pdf.subarray(0, base.length)).equals(Buffer.from(base)));
        const [check] = (await verifyPdf({ pdf, trustAnchors: [pki.root.certificate] })).signatures;
        assert.equal(check!.indication, 'TOTAL_PASSED');
        if (hasTool('pdfsig')) {
          const [verdict] = await pdfsig(await space.write('linearized-signed.pdf', pdf));
          assert.equal(verdict!.validation, 'Signature is Valid.');
        }
      } finally {
        await space.remove();
      }
    },
  );
});
