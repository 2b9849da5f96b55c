import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { assertSignaturesValid, hasTool, tool, useWorkspace } from '../pdf/oracles.js';
import { fileUsedBy, readDocument, writeMainFile } from '../helpers/documents.js';
import { makePdf, PNG_1PX } from '../helpers/pdf.js';
import { OWNER, aUser } from '../helpers/people.js';
import { upload } from '../helpers/server.js';
import { assertBodyInvalid } from '../helpers/api-errors.js';
import { useServer } from '../helpers/use-server.js';

const at = (x: number, y: number) => ({ percentX: x, percentY: y, percentWidth: 0.25, percentHeight: 0.08 });

describe('DESIGN "Signing inside other calls": POST /documents and PUT /documents/:version sign and annotate with the engine of PUT /documents/sign', () => {
  const server = useServer();
  const space = useWorkspace();
  let owner: string;
  before(async () => {
    owner = (await aUser(server, OWNER)).token;
  });

  const pdf = () => upload(server, owner, makePdf({ pages: 2 }));
  const image = () => upload(server, owner, PNG_1PX, { name: 'logo.png', type: 'image/png' });
  const signatureImage = () =>
    upload(server, owner, PNG_1PX, { path: '/files/signature', name: 'sig.png', type: 'image/png' });
  const create = (title: string, content: string, optionalData?: Record<string, unknown>) =>
    server.api('POST', '/documents', {
      token: owner,
      body: {
        body: { documentTitle: title, pdfFile: { content } },
        ...(optionalData ? { optionalData } : {}),
      },
    });
  const read = (id: string) => readDocument(server, owner, id);
  const documentsTitled = async (title: string) =>
    (await server.app.deps.db.selectFrom('documents').select('id').where('title', '=', title).execute())
      .length;
  const fileUse = (id: string) => fileUsedBy(server, id);
  const mainFile = (id: string) => writeMainFile(server, owner, id, space);
  const assertSignatures = (path: string, count: number) =>
    assertSignaturesValid(path, count, { qpdf: true });

  it('POST /documents with optionalData.signatures signs at creation: isSigned, a new main file, pdfsig "Signature is Valid.", qpdf clean', async () => {
    const content = await pdf();
    const [sig, logo] = [await signatureImage(), await image()];
    const created = await create('Signed at creation', content, {
      signatures: [
        { type: 'signature', blob: sig, pages: [1], position: at(0.1, 0.8), timestamp: true },
        { type: 'initials', pages: [2], position: at(0.7, 0.9) },
      ],
      images: [{ blob: logo, pages: [2], position: at(0.1, 0.1) }],
      annotations: [{ text: 'Ref {{{documentId}}}', pages: [1], position: at(0.5, 0.05) }],
    });
    assert.equal(created.status, 200, created.text);
    const doc = created.body.results[0];
    assert.equal(doc.isSigned, true);
    assert.equal(doc._version, 1, 'created and signed as one change');
    assert.notEqual(doc.pdfFile.content, content, 'the signed file has a new id');
    assert.equal(created.body.signing.levelAchieved, 'B-B');
    assert.equal(created.body.signing.fellBack, false);
    const revision = await server.api('GET', `/revisions/document/${doc.documentId}/1`, { token: owner });
    assert.equal(revision.body.pdfFile.id, content, 'the uploaded file stays revision 1');
    const read1 = await read(doc.documentId);
    assert.equal(read1.isSigned, true);
    assert.equal(read1.pdfFile.content, doc.pdfFile.content);
    await assertSignatures(await mainFile(doc.documentId), 1);

    const report = await server.api('GET', `/documents/${doc.documentId}/verify`, { token: owner });
    assert.equal(report.status, 200, report.text);
    assert.equal(report.body.signatures.length, 1);
    assert.match(JSON.stringify(report.body.signatures[0]), /Olivia Owner/, 'signed in the caller’s name');

    assert.equal(
      await fileUse(logo),
      `document:${doc.documentId}`,
      'spec Files rule 3: the image is used up',
    );
    const reuse = await create('Reuses the image', await pdf(), {
      images: [{ blob: logo, position: at(0.1, 0.1) }],
    });
    assert.equal(reuse.status, 400);
    assert.equal(reuse.body.code, 'FILE_NOT_USABLE');
    assert.match(reuse.body.message, /^optionalData\.images\[0\]\.blob: /);

    const events = await server.app.deps.db
      .selectFrom('events')
      .select('event')
      .where('document_id', '=', doc.documentId)
      .execute();
    assert.deepEqual(events.map((e) => e.event).sort(), ['documentCreated', 'documentSigned']);

    const again = await server.api('PUT', '/documents/sign/1', {
      token: owner,
      body: { id: doc.documentId, signatures: [{ type: 'signature', blob: sig, position: at(0.4, 0.8) }] },
    });
    assert.equal(again.status, 200, again.text);
    await assertSignatures(await mainFile(doc.documentId), 2);
  });

  it('POST /documents with images and annotations only annotates: a new main file, not signed', async () => {
    const content = await pdf();
    const created = await create('Annotated at creation', content, {
      images: [{ blob: await image(), pages: [1], position: at(0.1, 0.1) }],
      annotations: [
        { text: 'Title: {{{documentTitle}}}', pages: [1, 2], position: at(0.1, 0.3), bold: true },
      ],
    });
    assert.equal(created.status, 200, created.text);
    const doc = created.body.results[0];
    assert.equal(doc.isSigned, false);
    assert.equal(created.body.signing, undefined);
    assert.notEqual(doc.pdfFile.content, content);
    const path = await mainFile(doc.documentId);
    await assertSignatures(path, 0);
    if (hasTool('qpdf')) {
      const objects = await tool('qpdf', ['--json=2', '--json-key=qpdf', path]);
      assert.match(objects, /"\/Annots"/, 'the pages carry annotations');
      assert.match(objects, /"\/Subtype": "\/FreeText"|"\/Subtype": "\/Stamp"/);
    }
    const revision = await server.api('GET', `/revisions/document/${doc.documentId}/2`, { token: owner });
    assert.equal(revision.status, 200, revision.text);
  });

  it('a position above 1 is refused with the spec’s validation text, and nothing is created: the files stay usable', async () => {
    const content = await pdf();
    const logo = await image();
    const far = await create('Bad position', content, {
      signatures: [
        {
          type: 'signature',
          position: { percentX: 1.2, percentY: 0.5, percentWidth: 0.1, percentHeight: 0.1 },
        },
      ],
      images: [{ blob: logo, position: at(0.1, 0.1) }],
    });
    assertBodyInvalid(far, '"optionalData.signatures[0].position.percentX" must be less than or equal to 1');
    assert.equal(far.body.code, 'VALIDATION_ERROR');
    assert.equal(await documentsTitled('Bad position'), 0);

    // Failures found while signing, inside the transaction: a page past the end, a signature image
    // from the wrong endpoint. Each rolls everything back.
    const pastTheEnd = await create('Bad position', content, {
      images: [{ blob: logo, position: at(0.1, 0.1) }],
      signatures: [{ type: 'signature', pages: [3], position: at(0.1, 0.1) }],
    });
    assertBodyInvalid(pastTheEnd, '"optionalData.signatures[0].pages[0]" must be less than or equal to 2');
    const wrongKind = await create('Bad position', content, {
      images: [{ blob: logo, position: at(0.1, 0.1) }],
      signatures: [{ type: 'signature', blob: logo, position: at(0.1, 0.1) }],
    });
    assert.equal(wrongKind.status, 400);
    assert.equal(wrongKind.body.code, 'FILE_NOT_USABLE');
    assert.match(wrongKind.body.message, /^optionalData\.signatures\[0\]\.blob: /);
    assert.equal(await documentsTitled('Bad position'), 0, 'no document created');
    assert.equal(await fileUse(content), null, 'the main file is not used up');
    assert.equal(await fileUse(logo), null, 'the image is not used up');

    const fine = await create('Good position', content, {
      images: [{ blob: logo, position: at(0.1, 0.1) }],
      signatures: [{ type: 'signature', position: at(0.1, 0.1) }],
    });
    assert.equal(fine.status, 200, fine.text);
    assert.equal(fine.body.results[0].isSigned, true);
  });

  it('PUT /documents/:version with signatures signs the main file: a new main file, the version bumped once, 409 on a stale version', async () => {
    const created = await create('Signed on change', await pdf());
    const doc = created.body.results[0];
    const stale = await server.api('PUT', '/documents/4', {
      token: owner,
      body: { id: doc.documentId, body: {}, signatures: [{ type: 'signature', position: at(0.1, 0.8) }] },
    });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.code, 'VERSION_MISMATCH');
    assert.equal(stale.body.message, 'Version mismatch');

    const far = await server.api('PUT', '/documents/1', {
      token: owner,
      body: {
        id: doc.documentId,
        body: {},
        signatures: [
          {
            type: 'signature',
            position: { percentX: 1.5, percentY: 0.5, percentWidth: 0.1, percentHeight: 0.1 },
          },
        ],
      },
    });
    assertBodyInvalid(far, '"signatures[0].position.percentX" must be less than or equal to 1');

    const signed = await server.api('PUT', '/documents/1', {
      token: owner,
      body: {
        id: doc.documentId,
        body: {},
        signatures: [{ type: 'signature', blob: await signatureImage(), position: at(0.1, 0.8) }],
      },
    });
    assert.equal(signed.status, 200, signed.text);
    const after1 = signed.body.results[0];
    assert.equal(after1._version, 2);
    assert.equal(after1.isSigned, true);
    assert.notEqual(after1.pdfFile.content, doc.pdfFile.content);
    assert.equal(signed.body.signing.levelAchieved, 'B-B');
    await assertSignatures(await mainFile(doc.documentId), 1);

    const edited = await server.api('PUT', '/documents/2', {
      token: owner,
      body: {
        id: doc.documentId,
        body: { documentTitle: 'Renamed and signed again' },
        signatures: [{ type: 'initials', pages: [2], position: at(0.5, 0.8) }],
        annotations: [{ text: '{{{documentTitle}}}', position: at(0.1, 0.1) }],
      },
    });
    assert.equal(edited.status, 200, edited.text);
    const after2 = edited.body.results[0];
    assert.equal(after2._version, 3, 'an edit and a signature in one call are one change');
    assert.equal(after2.documentTitle, 'Renamed and signed again');
    assert.notEqual(after2.pdfFile.content, after1.pdfFile.content);
    await assertSignatures(await mainFile(doc.documentId), 2);

    const replay = await server.api('PUT', '/documents/2', {
      token: owner,
      body: { id: doc.documentId, body: {}, signatures: [{ type: 'signature', position: at(0.1, 0.5) }] },
    });
    assert.equal(replay.status, 409);
    assert.equal((await read(doc.documentId))._version, 3);
  });

  it('PUT /documents/:version with a new pdfFile and signatures signs the new file; images alone annotate without signing', async () => {
    const created = await create('Replaced then signed', await pdf());
    const doc = created.body.results[0];
    const replacement = await pdf();
    const logo = await image();
    const annotated = await server.api('PUT', '/documents/1', {
      token: owner,
      body: { id: doc.documentId, body: {}, images: [{ blob: logo, position: at(0.2, 0.2) }] },
    });
    assert.equal(annotated.status, 200, annotated.text);
    assert.equal(annotated.body.results[0].isSigned, false);
    assert.equal(annotated.body.results[0]._version, 2);
    assert.equal(await fileUse(logo), `document:${doc.documentId}`);
    await assertSignatures(await mainFile(doc.documentId), 0);

    const signed = await server.api('PUT', '/documents/2', {
      token: owner,
      body: {
        id: doc.documentId,
        body: { pdfFile: { content: replacement } },
        signatures: [{ type: 'signature', position: at(0.1, 0.8) }],
      },
    });
    assert.equal(signed.status, 200, signed.text);
    const after = signed.body.results[0];
    assert.equal(after.isSigned, true);
    assert.equal(after._version, 3);
    assert.notEqual(after.pdfFile.content, replacement, 'the replacement was signed into a new file');
    const revisions = await server.app.deps.db
      .selectFrom('document_revisions')
      .select(['file_id', 'reason'])
      .where('document_id', '=', doc.documentId)
      .orderBy('revision')
      .execute();
    assert.deepEqual(
      revisions.map((r) => r.reason),
      ['created', 'annotated', 'replaced', 'signed'],
    );
    assert.equal(revisions[2]?.file_id, replacement);
    await assertSignatures(await mainFile(doc.documentId), 1);

    const failing = await server.api('PUT', '/documents/3', {
      token: owner,
      body: {
        id: doc.documentId,
        body: { documentTitle: 'Should not stick' },
        signatures: [{ type: 'signature', pages: [9], position: at(0.1, 0.8) }],
      },
    });
    assertBodyInvalid(failing, '"signatures[0].pages[0]" must be less than or equal to 2');
    const unchanged = await read(doc.documentId);
    assert.equal(unchanged._version, 3);
    assert.equal(unchanged.documentTitle, 'Replaced then signed', 'the edit rolled back with the signature');
  });
});
