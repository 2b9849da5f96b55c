import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { makePdf } from '../helpers/pdf.js';
import { useServer } from '../helpers/use-server.js';

describe('spec Files: signatureAnchors on POST /files/saveFile', () => {
  const server = useServer();
  let token: string;
  before(async () => (token = await server.adminToken()));

  const uploadWith = (anchors: string, pages = 2) =>
    server.api('POST', '/files/saveFile', {
      token,
      form: {
        fields: { signatureAnchors: anchors },
        file: {
          name: 'a.pdf',
          type: 'application/pdf',
          bytes: makePdf({ pages, lines: ['Sign here: ____', 'Date: ____'] }),
        },
      },
    });

  it('answers anchorPositions: one entry per anchor, one field per match, offsets from the first letter’s top left', async () => {
    const response = await uploadWith(
      JSON.stringify([
        { id: 'sig', text: 'Sign here', offset: { percentX: 0.02, percentY: -0.01 } },
        { id: 'date', regexp: 'Da\\w+:' },
      ]),
    );
    assert.equal(response.status, 200, response.text);
    const byId = new Map(response.body.anchorPositions.map((a: { id: string }) => [a.id, a]));
    const sig = byId.get('sig') as {
      fields: { page: number; position: { percentX: number; percentY: number } }[];
    };
    assert.deepEqual(
      sig.fields.map((f) => f.page),
      [1, 2],
    );
    // makePdf draws line 2 at x = 72pt, baseline y = 700pt on a 612 × 792 page.
    assert.ok(
      Math.abs(sig.fields[0]!.position.percentX - (72 / 612 + 0.02)) < 0.01,
      JSON.stringify(sig.fields[0]),
    );
    const top = (792 - 700 - 14 * 0.75) / 792 - 0.01;
    assert.ok(Math.abs(sig.fields[0]!.position.percentY - top) < 0.02, JSON.stringify(sig.fields[0]));
    assert.equal((byId.get('date') as { fields: unknown[] }).fields.length, 2);
  });

  it('bad anchor requests get 400 with the Joi-style text; a non-PDF cannot be searched', async () => {
    assert.equal(
      (await uploadWith('not json')).body.message,
      'Request validation errors: BODY ERRORS: "signatureAnchors" must be a JSON array',
    );
    assert.equal(
      (await uploadWith(JSON.stringify([{ id: 'x', text: 'a', regexp: 'b' }]))).body.message,
      'Request validation errors: BODY ERRORS: "signatureAnchors[0]" must have exactly one of [text, regexp]',
    );
    assert.equal(
      (await uploadWith(JSON.stringify([{ id: 'x', text: 'a', offset: { percentZ: 1 } }]))).body.message,
      'Request validation errors: BODY ERRORS: "signatureAnchors[0].offset.percentZ" is not allowed',
    );
    const notPdf = await server.api('POST', '/files/saveFile', {
      token,
      form: {
        fields: { signatureAnchors: '[{"id":"a","text":"x"}]' },
        file: { name: 'a.txt', type: 'text/plain', bytes: Buffer.from('hello') },
      },
    });
    assert.equal(notPdf.status, 400);
  });
});
