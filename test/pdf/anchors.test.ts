import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findAnchors } from '../../src/pdf/anchors.js';
import { ValidationError } from '../../src/base/errors.js';
import { buildPdf, geometryPdf, manyPagesPdf } from '../fixtures/pdf-fixtures.js';

const TOLERANCE = 0.01;

function near(actual: number, expected: number, label: string): void {
  assert.ok(
    Math.abs(actual - expected) <= TOLERANCE,
    `${label}: ${actual} is not within ${TOLERANCE} of ${expected}`,
  );
}

describe('anchors (spec: Anchor rules)', () => {
  for (const objectStreams of [false, true]) {
    it(`rule 1: a zero offset puts the field on the top-left of the first letter, on rotated and cropped pages too${objectStreams ? ' (object streams)' : ''}`, async () => {
      const { bytes, texts } = geometryPdf({ objectStreams });
      const results = await findAnchors({
        pdf: bytes,
        anchors: texts.map((t) => ({ id: t.text, text: t.text })),
      });
      for (const placed of texts) {
        const result = results.find((r) => r.id === placed.text)!;
        assert.equal(result.fields.length, 1, placed.text);
        const [field] = result.fields;
        assert.equal(field!.page, placed.page, `${placed.text} page`);
        near(field!.position.percentX, placed.expected.percentX, `${placed.text} x`);
        near(field!.position.percentY, placed.expected.percentY, `${placed.text} y`);
      }
    });
  }

  it('rule 2: positive offsets move right and down, negative ones left and up', async () => {
    const { bytes, texts } = geometryPdf();
    const plain = texts.find((t) => t.text === 'PLAIN_ANCHOR')!;
    const [moved] = await findAnchors({
      pdf: bytes,
      anchors: [
        {
          id: 'a',
          text: 'PLAIN_ANCHOR',
          offset: { percentX: 0.1, percentY: -0.05, percentWidth: 0.2, percentHeight: 0.05 },
        },
      ],
    });
    const { position } = moved!.fields[0]!;
    near(position.percentX, plain.expected.percentX + 0.1, 'x');
    near(position.percentY, plain.expected.percentY - 0.05, 'y');
    assert.equal(position.percentWidth, 0.2);
    assert.equal(position.percentHeight, 0.05);
  });

  it('an omitted offset is zero (Contract) and the field takes the size of the matched text', async () => {
    const { bytes } = geometryPdf();
    const [result] = await findAnchors({ pdf: bytes, anchors: [{ id: 'a', text: 'PLAIN_ANCHOR' }] });
    const { position } = result!.fields[0]!;
    // 12 Helvetica capitals at 10 pt are about 78 pt wide; one line is 10 pt high.
    near(position.percentWidth, 78 / 612, 'width');
    near(position.percentHeight, 10 / 792, 'height');
  });

  it('rule 3: every match is one field; several anchors give several entries; pages are 1-based', async () => {
    const { bytes } = manyPagesPdf(100);
    const results = await findAnchors({
      pdf: bytes,
      anchors: [
        { id: 'numbers', regexp: 'ANCHOR-\\d+' },
        { id: 'lorem', text: 'dolor sit amet' },
        { id: 'none', text: 'NOT IN THE DOCUMENT' },
      ],
    });
    const byId = new Map(results.map((r) => [r.id, r]));
    assert.deepEqual(
      byId.get('numbers')!.fields.map((f) => f.page),
      [10, 20, 30, 40, 50, 60, 70, 80, 90, 100],
    );
    assert.equal(byId.get('lorem')!.fields.length, 100);
    assert.deepEqual(byId.get('none')!.fields, []);
  });

  it('rule 4: computed values outside 0..1 are returned as they are', async () => {
    const { bytes } = geometryPdf();
    const [result] = await findAnchors({
      pdf: bytes,
      anchors: [{ id: 'a', text: 'PLAIN_ANCHOR', offset: { percentX: -0.5, percentY: 0.9 } }],
    });
    const { position } = result!.fields[0]!;
    assert.ok(position.percentX < 0);
    assert.ok(position.percentY > 1);
  });

  it('finds text split over several show operators and words separated by positioning only', async () => {
    const { bytes } = buildPdf({
      pages: [
        {
          texts: [
            { text: 'Sign', x: 100, y: 500 },
            { text: 'ature:', x: 100 + 19.45, y: 500 }, // "Sign" is 19.45 pt wide at 10 pt Helvetica
            { text: 'Name', x: 300, y: 500 },
            { text: 'Here', x: 330, y: 500 },
          ],
        },
      ],
    });
    const results = await findAnchors({
      pdf: bytes,
      anchors: [
        { id: 'joined', text: 'Signature:' },
        { id: 'spaced', text: 'Name Here' },
      ],
    });
    assert.equal(results[0]!.fields.length, 1);
    assert.equal(results[1]!.fields.length, 1);
    near(results[0]!.fields[0]!.position.percentX, 100 / 612, 'x');
  });

  it('an invalid regular expression is a validation error', async () => {
    const { bytes } = geometryPdf();
    await assert.rejects(findAnchors({ pdf: bytes, anchors: [{ id: 'a', regexp: '([' }] }), ValidationError);
    await assert.rejects(findAnchors({ pdf: bytes, anchors: [{ id: 'a' }] }), ValidationError);
  });
});
