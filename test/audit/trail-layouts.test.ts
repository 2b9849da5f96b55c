import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { PdfArray, PdfDict, PdfString } from '@libpdf/core';
import { checkEmbeddedTrail, TRAIL_FILES, trailFiles } from '../../src/core/audit/embedded-trail.js';
import { TRAIL_FORMAT, type DocumentTrail } from '../../src/core/audit/document-trail.js';
import { readPdf, updatePdf } from '../../src/pdf/appendable-pdf.js';
import { associatedFiles, readEmbeddedFiles } from '../../src/pdf/embedded-files.js';
import { memorySource } from '../../src/pdf/reader/byte-source.js';
import { signPdf } from '../../src/pdf/sign-pdf.js';
import { verifyPdf } from '../../src/pdf/verify-pdf.js';
import { IncrementalUpdate, wholeFile } from '../../src/pdf/writer/incremental-writer.js';
import type { Signer } from '../../src/pki/signers/signer.js';
import { onePagePdf } from '../fixtures/pdf-fixtures.js';
import { createTestPki } from '../fixtures/test-pki.js';

const now = new Date('2026-03-01T10:00:00Z');

/** A trail whose one revision is `signed`, the file the users signed (no events: nothing to chain). */
function aTrail(signed: Uint8Array): DocumentTrail {
  return {
    format: TRAIL_FORMAT,
    generatedAt: now.toISOString(),
    tenantId: 'tenant-1',
    document: {
      id: 'doc-1',
      title: 'Lease',
      owner: 'owner',
      createdBy: 'owner',
      createdAt: now.toISOString(),
      version: 2,
      state: 'completed',
    },
    anchor: { hash: '0'.repeat(64), records: 0 },
    revisions: [
      {
        revision: 1,
        reason: 'signed',
        actor: 'ivy',
        createdAt: now.toISOString(),
        size: signed.length,
        sha256: createHash('sha256').update(signed).digest('hex'),
        sha512: null,
      },
    ],
    events: [],
  };
}

/**
 * The layout of documents sealed before issue 38, built as that release built it: a revision of
 * attachments (the catalog's EmbeddedFiles name tree and /AF) between the users' signatures and the seal.
 */
async function oldLayout(pdf: Uint8Array, trail: DocumentTrail): Promise<Uint8Array> {
  const files = await trailFiles(trail, now);
  return updatePdf(memorySource(pdf), (opened) => {
    const update = new IncrementalUpdate(opened);
    const catalog = opened.resolve(opened.trailer.root) as PdfDict;
    const af = associatedFiles(update, files);
    const names = new PdfArray();
    files.forEach((file, i) => names.push(PdfString.fromString(file.name), af.at(i)!));
    catalog.set('Names', PdfDict.of({ EmbeddedFiles: PdfDict.of({ Names: names }) }));
    catalog.set('AF', af);
    update.set(opened.trailer.root, catalog);
    return wholeFile(update.write());
  });
}

function checked(pdf: Uint8Array) {
  return readPdf(pdf, async (opened) =>
    checkEmbeddedTrail(opened, (await verifyPdf({ pdf: opened })).signatures),
  );
}

describe('where a sealed document carries its audit trail, and that both layouts are read', () => {
  let ivy: Signer;
  let seal: Signer;
  let signed: Uint8Array;
  before(async () => {
    const pki = await createTestPki();
    ivy = await pki.signer({ name: 'Ivy' });
    seal = await pki.signer({ name: 'Organisation seal' });
    signed = (await signPdf({ pdf: onePagePdf().bytes, signer: ivy })).pdf;
  });

  /** The signed file sealed with `trail` as its associated files (no signature field named). */
  const sealWithTrail = async (trail: DocumentTrail) =>
    signPdf({ pdf: signed, signer: seal, associatedFiles: await trailFiles(trail, now) });

  it('a seal given the trail carries it on its own appearance, in its own revision: the trail is found there, intact and covered by the seal', async () => {
    const trail = aTrail(signed);
    const sealed = await sealWithTrail(trail);
    const files = await readEmbeddedFiles({ pdf: sealed.pdf });
    assert.deepEqual(
      files.map((f) => [f.name, f.mimeType, f.field]),
      [
        [TRAIL_FILES.json, 'application/json', sealed.fieldName],
        [TRAIL_FILES.pages, 'application/pdf', sealed.fieldName],
      ],
    );
    assert.deepEqual(JSON.parse(Buffer.from(files[0]!.bytes).toString('utf8')), trail);
    // One revision after the user's: the seal's.
    assert.equal(Buffer.from(sealed.appended).toString('latin1').match(/%%EOF/g)?.length, 1);
    const check = await checked(sealed.pdf);
    assert.deepEqual(
      [check.present, check.intact, check.coveredBy],
      [true, true, sealed.fieldName],
      check.problems.join(),
    );
    assert.deepEqual(
      check.revisions.map((r) => r.inFile),
      [true],
    );
  });

  it('a visible seal carries the files on the appearance it shows: the same form XObject draws the seal and holds the trail', async () => {
    const trail = aTrail(signed);
    const sealed = await signPdf({
      pdf: signed,
      signer: seal,
      signatures: [
        {
          type: 'stamp',
          pages: [1],
          position: { percentX: 0.6, percentY: 0.8, percentWidth: 0.3, percentHeight: 0.1 },
        },
      ],
      associatedFiles: await trailFiles(trail, now),
    });
    const files = await readEmbeddedFiles({ pdf: sealed.pdf });
    assert.deepEqual(
      files.map((f) => [f.name, f.field]),
      [
        [TRAIL_FILES.json, sealed.fieldName],
        [TRAIL_FILES.pages, sealed.fieldName],
      ],
    );
    const bbox = Buffer.from(sealed.appended)
      .toString('latin1')
      .match(/\/BBox \[([^\]]*)\](?:(?!endobj)[^])*?\/AF \[/)?.[1];
    assert.ok(bbox, 'the appearance with /AF has a /BBox');
    assert.notDeepEqual(
      bbox.trim().split(/\s+/).map(Number),
      [0, 0, 0, 0],
      'the appearance is the visible one',
    );
    const check = await checked(sealed.pdf);
    assert.deepEqual([check.intact, check.coveredBy], [true, sealed.fieldName], check.problems.join());
  });

  it('a document sealed before, its trail in the catalog’s EmbeddedFiles in a revision before the seal, is still read and checked: intact, covered by the seal', async () => {
    const trail = aTrail(signed);
    const withTrail = await oldLayout(signed, trail);
    const sealed = await signPdf({ pdf: withTrail, signer: seal });
    const files = await readEmbeddedFiles({ pdf: sealed.pdf });
    assert.deepEqual(
      files.map((f) => [f.name, f.field]),
      [
        [TRAIL_FILES.json, undefined],
        [TRAIL_FILES.pages, undefined],
      ],
    );
    const check = await checked(sealed.pdf);
    assert.deepEqual(
      [check.present, check.intact, check.coveredBy],
      [true, true, sealed.fieldName],
      check.problems.join(),
    );
  });

  it('a trail on a signature’s appearance that no valid signature covers is not intact', async () => {
    const trail = aTrail(signed);
    const sealed = await sealWithTrail(trail);
    // The seal's signature value spoilt (its last byte, the last non-zero hex digit of /Contents, at B-B):
    // the trail it carries is no longer covered by a valid signature.
    const spoilt = Buffer.from(sealed.pdf);
    const { signatures } = await verifyPdf({ pdf: sealed.pdf });
    const [, gapStart, gapEnd] = signatures.at(-1)!.byteRange as [number, number, number];
    let at = gapEnd - 2;
    while (at > gapStart && spoilt[at] === 0x30) at--;
    spoilt[at] = spoilt[at] === 0x31 ? 0x32 : 0x31;
    const check = await checked(spoilt);
    assert.equal(check.present, true);
    assert.equal(check.intact, false);
    assert.equal(check.coveredBy, undefined);
  });
});
