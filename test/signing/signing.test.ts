import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { assertSignaturesValid, useWorkspace } from '../pdf/oracles.js';
import { PNG_1PX } from '../helpers/pdf.js';
import { aDocument, readDocument, signDocument, writeMainFile } from '../helpers/documents.js';
import { anOwnerAndTwoSigners } from '../helpers/people.js';
import { linkOf, signByLink } from '../helpers/sharing.js';
import { upload, USER_PASSWORD } from '../helpers/server.js';
import { assertBodyInvalid } from '../helpers/api-errors.js';
import { useServer } from '../helpers/use-server.js';

const at = (x: number, y: number) => ({ percentX: x, percentY: y, percentWidth: 0.25, percentHeight: 0.08 });

describe('signing through the API: sign, seal, annotate, verify, and a signing workflow to completed', () => {
  const server = useServer({ smtp: true });
  const space = useWorkspace();
  let owner: string;
  before(async () => (owner = await anOwnerAndTwoSigners(server)));

  const read = (id: string) => readDocument(server, owner, id);
  const newDoc = async (title: string) => read(await aDocument(server, owner, { title, pdf: { pages: 2 } }));
  /** pdfsig and qpdf on the document's main file as it is now. */
  const assertAllValid = async (id: string, count: number) =>
    assertSignaturesValid(await writeMainFile(server, owner, id, space), count, { qpdf: true });

  it('PUT /documents/sign/:version signs with a visual from the caller’s signature image; the main file changes; pdfsig says valid', async () => {
    const doc = await newDoc('Owner signs');
    const image = await upload(server, owner, PNG_1PX, {
      path: '/files/signature',
      name: 'sig.png',
      type: 'image/png',
    });
    const signed = await server.api('PUT', '/documents/sign/1', {
      token: owner,
      body: {
        id: doc.documentId,
        signatures: [
          {
            type: 'signature',
            blob: image,
            pages: [1],
            position: at(0.1, 0.8),
            timestamp: true,
            decorationType: 'line',
          },
        ],
      },
    });
    assert.equal(signed.status, 200, signed.text);
    assert.equal(signed.body.status, 'SUCCESS');
    assert.equal(signed.body.levelAchieved, 'B-B');
    const after = await read(doc.documentId);
    assert.notEqual(after.pdfFile.content, doc.pdfFile.content);
    assert.equal(after.isSigned, true);
    assert.equal(after._version, 2);
    const revision = await server.api('GET', `/revisions/document/${doc.documentId}/1`, { token: owner });
    assert.equal(revision.body.pdfFile.id, doc.pdfFile.content, 'the old file stays a revision');
    await assertAllValid(doc.documentId, 1);
    const again = await server.api('PUT', '/documents/sign/2', {
      token: owner,
      body: { id: doc.documentId, signatures: [{ type: 'signature', blob: image, position: at(0.5, 0.8) }] },
    });
    assert.equal(again.status, 200, 'a signature image is usable any number of times');
    await assertAllValid(doc.documentId, 2);
  });

  it('a type stamp signature takes a stamp id as its blob (stamps became resources)', async () => {
    const doc = await newDoc('Stamped');
    const image = await upload(server, owner, PNG_1PX, { name: 'stamp.png', type: 'image/png' });
    const stamp = await server.api('POST', '/stamps', {
      token: owner,
      body: { name: 'Approved', file: image },
    });
    assert.equal(stamp.status, 200, stamp.text);
    const signed = await server.api('PUT', '/documents/sign/1', {
      token: owner,
      body: {
        id: doc.documentId,
        signatures: [{ type: 'stamp', blob: stamp.body.id, position: at(0.6, 0.1) }],
      },
    });
    assert.equal(signed.status, 200, signed.text);
    await assertAllValid(doc.documentId, 1);
    const unknown = await server.api('PUT', '/documents/sign/2', {
      token: owner,
      body: {
        id: doc.documentId,
        signatures: [{ type: 'stamp', blob: 'no-such-stamp', position: at(0.6, 0.3) }],
      },
    });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.code, 'FILE_NOT_USABLE');
  });

  it('the spec’s validation text for a position above 1, and 409 for a stale version', async () => {
    const doc = await newDoc('Bad position');
    const far = await server.api('PUT', '/documents/sign/1', {
      token: owner,
      body: {
        id: doc.documentId,
        signatures: [
          {
            type: 'signature',
            position: { percentX: 1.2, percentY: 0.5, percentWidth: 0.1, percentHeight: 0.1 },
          },
        ],
      },
    });
    assertBodyInvalid(far, '"signatures[0].position.percentX" must be less than or equal to 1');
    const stale = await server.api('PUT', '/documents/sign/7', {
      token: owner,
      body: { id: doc.documentId, signatures: [{ type: 'signature', position: at(0.1, 0.1) }] },
    });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.code, 'VERSION_MISMATCH');
    const saveFileImage = await upload(server, owner, PNG_1PX, { name: 'x.png', type: 'image/png' });
    const wrongKind = await server.api('PUT', '/documents/sign/1', {
      token: owner,
      body: {
        id: doc.documentId,
        signatures: [{ type: 'signature', blob: saveFileImage, position: at(0.1, 0.1) }],
      },
    });
    assert.equal(wrongKind.status, 400);
    assert.equal(wrongKind.body.code, 'FILE_NOT_USABLE');
    assert.equal((await read(doc.documentId))._version, 1, 'nothing changed');
  });

  it('two signers at once on one version: one gets 409, no signature is lost', async () => {
    const doc = await newDoc('Race');
    const attempts = await Promise.all(
      [0.1, 0.5].map((x) =>
        server.api('PUT', '/documents/sign/1', {
          token: owner,
          body: { id: doc.documentId, signatures: [{ type: 'signature', position: at(x, 0.2) }] },
        }),
      ),
    );
    assert.deepEqual(attempts.map((a) => a.status).sort(), [200, 409]);
    await assertAllValid(doc.documentId, 1);
  });

  it('seal, annotate with the barcode, verify: every signature stays valid; dss=true adds the XML reports', async () => {
    const doc = await newDoc('Seal me');
    const sealed = await server.api('PUT', '/documents/seal/1', {
      token: owner,
      body: { id: doc.documentId, certificate: true },
    });
    assert.equal(sealed.status, 200, sealed.text);
    const annotated = await server.api('PUT', '/documents/annotate/2', {
      token: owner,
      body: {
        id: doc.documentId,
        images: [{ blob: doc.barcode, subtype: 'image_barcode', pages: [1], position: at(0.7, 0.05) }],
        annotations: [
          {
            text: 'Ref {{{documentId}}}',
            pages: [1],
            position: at(0.1, 0.05),
            align: 'center',
            bold: true,
            color: '#112233',
          },
        ],
      },
    });
    assert.equal(annotated.status, 200, annotated.text);
    await assertAllValid(doc.documentId, 1);
    const report = await server.api('GET', `/documents/${doc.documentId}/verify`, {
      token: owner,
      query: { dss: 'true' },
    });
    assert.equal(report.status, 200, report.text);
    assert.equal(report.body.signatures.length, 1);
    assert.equal(report.body.signatures[0].indication, 'TOTAL_PASSED');
    assert.match(report.body.dss.validationReport, /ValidationReport/);
    const provider = await server.api('PUT', '/documents/seal/3', {
      token: owner,
      body: { id: doc.documentId, certificate: true, signatureProvider: 'nope' },
    });
    assert.equal(provider.status, 400);
  });

  it('three recipients sign (an external one by link) and the document completes, sealed; pdfsig says every signature is valid', async () => {
    const doc = await newDoc('Three signers');
    const shared = await server.api('POST', '/share', {
      token: owner,
      body: {
        id: doc.documentId,
        sequential: true,
        data: [
          { sharePurpose: 'sign', shareTo: 'ivy' },
          { sharePurpose: 'sign', shareTo: 'jon' },
          { sharePurpose: 'sign', shareTo: 'ext@example.org' },
        ],
      },
    });
    assert.equal(shared.status, 200, shared.text);
    assert.deepEqual((await read(doc.documentId)).waitingFor, ['ivy', 'jon', 'ext@example.org']);
    for (const name of ['ivy', 'jon']) {
      const token = await server.login(name, USER_PASSWORD);
      const signed = await signDocument(
        server,
        token,
        doc.documentId,
        [{ type: 'signature', position: at(name === 'ivy' ? 0.05 : 0.35, 0.85) }],
        owner,
      );
      assert.equal(signed.status, 200, signed.text);
    }
    assert.deepEqual((await read(doc.documentId)).waitingFor, ['ext@example.org']);
    const token = await linkOf(server.smtp, 'ext@example.org');
    const last = await signByLink(server, token, doc.documentId, [
      { type: 'signature', position: at(0.65, 0.85) },
    ]);
    assert.equal(last.status, 200, last.text);
    assert.equal(last.body.shareStateName, 'completed');
    const done = await read(doc.documentId);
    assert.equal(done.workflow.shareStateName, 'completed');
    assert.deepEqual(done.waitingFor, []);
    await assertAllValid(doc.documentId, 4);
    const events = await server.app.deps.db
      .selectFrom('events')
      .select('event')
      .where('document_id', '=', doc.documentId)
      .execute();
    assert.equal(events.filter((e) => e.event === 'documentSigned').length, 3);
    assert.equal(events.filter((e) => e.event === 'documentCompleted').length, 1);
    await server.smtp.waitFor('owner@example.test', /Three signers/);
  });
});
