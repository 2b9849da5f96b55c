import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { aDocument, mainFileOf, readDocument } from '../helpers/documents.js';
import { useServer } from '../helpers/use-server.js';
import { hasTool, pdfsig, useWorkspace } from '../pdf/oracles.js';

const at = (x: number, y: number) => ({ percentX: x, percentY: y, percentWidth: 0.25, percentHeight: 0.06 });

/**
 * Issue 38, Deliver 2: a signature after another adds only what strict validators allow after a
 * signature (its field and widget): its visuals on the widget's page are drawn in the widget; those on
 * other pages cannot be (a field has one widget, on one page) and the answer says so.
 */
describe('a later signer’s visuals: in the widget on its page; elsewhere annotations, and a warning', () => {
  const server = useServer();
  const space = useWorkspace();
  let token: string;
  let id: string;

  before(async () => {
    token = await server.adminToken();
    id = await aDocument(server, token, { title: 'Two pages', pdf: { pages: 2 } });
  });

  const sign = async (body: Record<string, unknown>) => {
    const { _version: version } = await readDocument(server, token, id);
    const answer = await server.api('PUT', `/documents/sign/${version}`, { token, body: { id, ...body } });
    assert.equal(answer.status, 200, answer.text);
    return answer.body;
  };
  const modifications = async () =>
    (await server.api('GET', `/documents/${id}/verify`, { token })).body.signatures[0].modifications as {
      kind: string;
      pages: number[];
    }[];

  it('the first signature keeps its visuals as annotations; a later one on one page adds only its widget (no warning); one with initials on page 2 is warned, and page 2’s initials are an annotation after the first signature', async () => {
    const first = await sign({
      signatures: [{ type: 'signature', pages: [1], position: at(0.05, 0.8) }],
      annotations: [{ text: 'First signer', pages: [1], position: at(0.05, 0.9) }],
    });
    assert.equal(first.warnings, undefined, JSON.stringify(first));

    const onePage = await sign({
      signatures: [{ type: 'signature', pages: [1], position: at(0.4, 0.8) }],
      annotations: [{ text: 'Agreed', pages: [1], position: at(0.4, 0.9) }],
    });
    assert.equal(onePage.warnings, undefined, JSON.stringify(onePage));
    assert.deepEqual(
      (await modifications()).map((m) => m.kind),
      ['signature'],
      'the second signer’s revision: its field and widget only',
    );

    const twoPages = await sign({
      signatures: [
        { type: 'signature', pages: [1], position: at(0.7, 0.8) },
        { type: 'initials', pages: [1, 2], position: at(0.7, 0.05) },
      ],
    });
    assert.equal(twoPages.warnings.length, 1, JSON.stringify(twoPages));
    assert.match(
      twoPages.warnings[0],
      /^The visuals on page 2 are annotations of their own: this signature follows another and its widget, which holds its visuals, is on page 1\. .*pyHanko/,
    );
    const after = await modifications();
    assert.deepEqual(
      after.map((m) => m.kind),
      ['signature', 'signature', 'annotation'],
      JSON.stringify(after),
    );
    assert.deepEqual(after[2]!.pages, [2]);

    if (hasTool('pdfsig')) {
      const verdicts = await pdfsig(
        await space.write('later-signers.pdf', await mainFileOf(server, token, id)),
      );
      assert.deepEqual(
        verdicts.map((v) => v.validation),
        ['Signature is Valid.', 'Signature is Valid.', 'Signature is Valid.'],
      );
    }
  });
});
