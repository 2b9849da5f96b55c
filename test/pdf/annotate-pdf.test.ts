import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PdfDict, PdfName, PdfStream } from '@libpdf/core';
import { PDF, PdfArray } from '@libpdf/core';
import { annotatePdf } from '../../src/pdf/annotate-pdf.js';
import { qrPng } from '../../src/pdf/barcode.js';
import { signPdf } from '../../src/pdf/sign-pdf.js';
import {
  ImageInvalid,
  PdfEncrypted,
  PdfInvalid,
  PdfRestricted,
  PositionOutOfRange,
} from '../../src/pdf/errors.js';
import { ValidationError } from '../../src/base/errors.js';
import { geometryPdf, onePagePdf } from '../fixtures/pdf-fixtures.js';
import { createTestPki } from '../fixtures/test-pki.js';
import { hasTool, pdfsig, tool, workspace } from './oracles.js';

const box = { percentX: 0.7, percentY: 0.02, percentWidth: 0.15, percentHeight: 0.1 };

async function annotationsOf(pdf: Uint8Array, pageIndex = 0): Promise<PdfDict[]> {
  const doc = await PDF.load(pdf);
  const annots = doc.getPage(pageIndex)!.dict.get('Annots', (ref) => doc.getObject(ref));
  if (!(annots instanceof PdfArray)) return [];
  return annots.toArray().map((ref) => doc.getObject(ref as never) as PdfDict);
}

describe('annotate (PUT /documents/annotate): images and text as an incremental update without a signature', () => {
  it('places the QR barcode and a text annotation, each with its own appearance stream', async () => {
    const base = onePagePdf().bytes;
    const png = await qrPng('https://signery.example/d/42');
    assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47], 'qrPng gives PNG bytes');
    const pdf = await annotatePdf({
      pdf: base,
      images: [
        { pages: [1], position: box, image: png, subtype: 'image_barcode', comment: 'Document barcode' },
      ],
      annotations: [
        {
          subtype: 'annotation_generic',
          text: 'Document 42 — approved',
          pages: [1],
          position: { percentX: 0.05, percentY: 0.02, percentWidth: 0.4, percentHeight: 0.05 },
          align: 'right',
          fontSize: 14,
          bold: true,
          color: '#aa0000',
          backgroundColor: '#00ff0040',
        },
      ],
    });
    assert.ok(Buffer.from(pdf.subarray(0, base.length)).equals(Buffer.from(base)), 'incremental');
    const annotations = await annotationsOf(pdf);
    const subtypes = annotations.map((a) => (a.get('Subtype') as PdfName).value).sort();
    assert.deepEqual(subtypes, ['FreeText', 'Stamp']);
    for (const annotation of annotations) {
      const ap = annotation.get('AP') as PdfDict;
      assert.ok(ap.get('N'), 'normal appearance');
    }
    const doc = await PDF.load(pdf);
    const stamp = annotations.find((a) => (a.get('Subtype') as PdfName).value === 'Stamp')!;
    const appearance = doc.getObject((stamp.get('AP') as PdfDict).get('N') as never) as PdfStream;
    assert.match(Buffer.from(appearance.getDecodedData()).toString('latin1'), /\/Im\d+ Do/);
    if (hasTool('qpdf')) {
      const space = await workspace();
      try {
        const out = await tool('qpdf', ['--check', await space.write('annotated.pdf', pdf)]);
        assert.match(out, /No syntax or stream encoding errors found/, out);
      } finally {
        await space.remove();
      }
    }
  });

  it('places annotations upright on rotated pages (the appearance counter-rotates with /Matrix)', async () => {
    const pdf = await annotatePdf({
      pdf: geometryPdf().bytes,
      annotations: [{ text: 'upright', pages: [2, 4, 5], position: box }],
    });
    const doc = await PDF.load(pdf);
    const matrices = [1, 3, 4].map((pageIndex) => {
      const annots = doc.getPage(pageIndex)!.dict.get('Annots', (ref) => doc.getObject(ref)) as PdfArray;
      const annotation = doc.getObject(annots.at(0) as never) as PdfDict;
      const stream = doc.getObject((annotation.get('AP') as PdfDict).get('N') as never) as PdfStream;
      return (stream.get('Matrix') as PdfArray)
        .toArray()
        .map((n) => (n as unknown as { value: number }).value);
    });
    assert.deepEqual(matrices, [
      [0, 1, -1, 0, 0, 0],
      [0, -1, 1, 0, 0, 0],
      [-1, 0, 0, -1, 0, 0],
    ]);
  });

  it(
    'keeps earlier signatures valid (pdfsig)',
    { skip: !hasTool('pdfsig') && 'pdfsig is not installed' },
    async () => {
      const pki = await createTestPki();
      const signed = await signPdf({ pdf: onePagePdf().bytes, signer: await pki.signer({ name: 'First' }) });
      const pdf = await annotatePdf({
        pdf: signed.pdf,
        images: [{ pages: [1], position: box, image: await qrPng('x') }],
      });
      const space = await workspace();
      try {
        const [verdict] = await pdfsig(await space.write('signed-annotated.pdf', pdf));
        assert.equal(verdict!.validation, 'Signature is Valid.');
      } finally {
        await space.remove();
      }
    },
  );
});

describe('typed errors for the HTTP layer', () => {
  it('PositionOutOfRange reads like the API validation text (spec: Errors 2)', async () => {
    const error = await annotatePdf({
      pdf: onePagePdf().bytes,
      images: [{ pages: [1], position: { ...box, percentX: 1.5 }, image: await qrPng('x') }],
    }).catch((e: unknown) => e);
    assert.ok(error instanceof PositionOutOfRange);
    assert.ok(error instanceof ValidationError, 'a 400');
    assert.equal(
      error.message,
      'Request validation errors: BODY ERRORS: "images[0].position.percentX" must be less than or equal to 1',
    );
    assert.deepEqual(error.field, {
      part: 'body',
      path: 'images[0].position.percentX',
      problem: 'must be less than or equal to 1',
    });
    await assert.rejects(
      annotatePdf({ pdf: onePagePdf().bytes, annotations: [{ text: 'x', pages: [2], position: box }] }),
      (e: unknown) =>
        e instanceof PositionOutOfRange &&
        e.message ===
          'Request validation errors: BODY ERRORS: "annotations[0].pages[0]" must be less than or equal to 1',
    );
  });

  it('PdfInvalid for garbage and truncated files', async () => {
    await assert.rejects(annotatePdf({ pdf: new Uint8Array(Buffer.from('hello, not a pdf')) }), PdfInvalid);
    const whole = onePagePdf().bytes;
    await assert.rejects(annotatePdf({ pdf: whole.subarray(0, Math.floor(whole.length * 0.6)) }), PdfInvalid);
    await assert.rejects(annotatePdf({ pdf: whole.subarray(0, whole.length - 30) }), PdfInvalid);
  });

  it('PdfEncrypted for files that need a password to open, PdfRestricted when their permissions forbid annotations; files that open without one are annotated and stay encrypted', async () => {
    const doc = await PDF.load(onePagePdf().bytes);
    doc.setProtection({ userPassword: 'secret', ownerPassword: 'owner' });
    const encrypted = await doc.save();
    await assert.rejects(annotatePdf({ pdf: encrypted }), PdfEncrypted);
    const restricted = await PDF.load(onePagePdf().bytes);
    restricted.setProtection({ ownerPassword: 'owner', permissions: { annotate: false } });
    await assert.rejects(annotatePdf({ pdf: await restricted.save() }), PdfRestricted);
    const ownerOnly = await PDF.load(onePagePdf().bytes);
    ownerOnly.setProtection({ ownerPassword: 'owner' });
    const protectedBytes = await ownerOnly.save();
    const annotated = await annotatePdf({
      pdf: protectedBytes,
      annotations: [{ text: 'Seen', pages: [1], position: box }],
    });
    assert.ok(annotated.length > protectedBytes.length, 'a revision was appended');
    const reread = await PDF.load(annotated);
    assert.equal(reread.isEncrypted, true);
    assert.equal(reread.getPage(0)!.getAnnotations().length, 1);
  });

  it('ImageInvalid for bytes that are not a PNG or JPEG', async () => {
    await assert.rejects(
      annotatePdf({
        pdf: onePagePdf().bytes,
        images: [{ pages: [1], position: box, image: new Uint8Array([1, 2, 3]) }],
      }),
      ImageInvalid,
    );
  });

  it('a colour that is not hex is a validation error', async () => {
    await assert.rejects(
      annotatePdf({
        pdf: onePagePdf().bytes,
        annotations: [{ text: 'x', pages: [1], position: box, color: 'red' }],
      }),
      (e: unknown) => e instanceof ValidationError && e.message.includes('"annotations[0].color"'),
    );
  });
});
