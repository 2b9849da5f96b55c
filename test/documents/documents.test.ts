import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { makePdf, PNG_1PX } from '../helpers/pdf.js';
import { createUser, upload } from '../helpers/server.js';
import { aUser } from '../helpers/people.js';
import { useServer } from '../helpers/use-server.js';

describe('documents: create, read, change, revisions (spec Documents)', () => {
  const server = useServer();
  let token: string;
  before(async () => (token = await server.adminToken()));

  async function create(body: Record<string, unknown>, root: Record<string, unknown> = {}) {
    return server.api('POST', '/documents', {
      token,
      body: { body: { documentTitle: 'Contract', ...body }, ...root },
    });
  }

  it('POST /documents answers {results:[document]} with a UUID documentId, barcode, _version 1 and the main file', async () => {
    const pdf = await upload(server, token, makePdf({ pages: 2 }));
    const response = await create(
      {
        pdfFile: { content: pdf },
        customFields: [
          { key: 'amount', type: 'number', value: 12500 },
          { key: 'due', type: 'date', value: Date.UTC(2026, 0, 2) },
          { key: 'signed', type: 'date', value: '2026-03-04T05:06:07Z' },
          { key: 'ref', displayName: 'Reference', type: 'string', value: 'A-1' },
        ],
      },
      { definitionType: 'ext', workflow: 'wf_archive' },
    );
    assert.equal(response.status, 200, response.text);
    const doc = response.body.results[0];
    assert.match(doc.documentId, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal(doc._version, 1);
    assert.equal(doc.isSigned, false);
    assert.equal(doc.documentType, 'd_default');
    assert.equal(doc.pdfFile.content, pdf);
    assert.equal(doc.pdfFile.mimetype, 'application/pdf');
    assert.deepEqual(doc.workflow, { workflowType: 'wf_archive' });
    assert.deepEqual(doc.waitingFor, []);
    assert.deepEqual(
      doc.customFields.map((f: { value: string }) => f.value),
      ['12500', '2026-01-02T00:00:00.000Z', '2026-03-04T05:06:07.000Z', 'A-1'],
    );
    const barcode = await fetch(`${server.url}/api/v1/files/loadFile/hash/${doc.barcode}?token=${token}`);
    assert.equal(barcode.status, 200);
    assert.equal(barcode.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await barcode.arrayBuffer()).subarray(1, 4), Buffer.from('PNG'));
    const read = await server.api('GET', `/documents/${doc.documentId}`, { token });
    assert.deepEqual(read.body.results[0], doc);
    const revision = await server.api('GET', `/revisions/document/${doc.documentId}/1`, { token });
    assert.equal(revision.body.pdfFile.id, pdf);
    assert.equal((await server.api('GET', `/revisions/document/${doc.documentId}/2`, { token })).status, 404);
  });

  it('custom field values that do not fit their type are refused', async () => {
    const bad = await create({ customFields: [{ key: 'n', type: 'number', value: 'twelve' }] });
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /"body.customFields\[0\].value" must be a number/);
    const badDate = await create({ customFields: [{ key: 'd', type: 'date', value: 'someday' }] });
    assert.equal(badDate.status, 400);
  });

  it('removed fields are refused: pdfFile._content_type, description, fileType', async () => {
    const pdf = await upload(server, token, makePdf());
    const response = await create({ pdfFile: { content: pdf, _content_type: 'application/pdf' } });
    assert.equal(response.status, 400);
    assert.equal(
      response.body.message,
      'Request validation errors: BODY ERRORS: "body.pdfFile._content_type" is not allowed',
    );
  });

  it('another user cannot see the document: 404, and the main file is not readable by them', async () => {
    const pdf = await upload(server, token, makePdf());
    const doc = (await create({ pdfFile: { content: pdf } })).body.results[0];
    const outsider = (await aUser(server, { name: 'outsider' })).token;
    assert.equal((await server.api('GET', `/documents/${doc.documentId}`, { token: outsider })).status, 404);
    assert.equal((await server.api('GET', `/files/loadFile/hash/${pdf}`, { token: outsider })).status, 404);
    const change = await server.api('PUT', '/documents/edit/1', {
      token: outsider,
      body: { id: doc.documentId, documentTitle: 'x' },
    });
    assert.equal(change.status, 404);
  });

  it('change calls are compare-and-set on _version: a stale version gets 409 VERSION_MISMATCH', async () => {
    const doc = (await create({})).body.results[0];
    const first = await server.api('PUT', '/documents/edit/1', {
      token,
      body: { id: doc.documentId, documentTitle: 'Renamed' },
    });
    assert.equal(first.status, 200);
    assert.equal(first.body.results[0]._version, 2);
    const stale = await server.api('PUT', '/documents/edit/1', {
      token,
      body: { id: doc.documentId, documentTitle: 'Again' },
    });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.code, 'VERSION_MISMATCH');
    assert.equal(stale.body.message, 'Version mismatch');
  });

  it('two concurrent changes to one version: exactly one succeeds, the other gets 409', async () => {
    for (let round = 0; round < 5; round++) {
      const doc = (await create({})).body.results[0];
      const attempts = await Promise.all(
        ['A', 'B', 'C'].map((t) =>
          server.api('PUT', '/documents/edit/1', { token, body: { id: doc.documentId, documentTitle: t } }),
        ),
      );
      assert.deepEqual(attempts.map((a) => a.status).sort(), [200, 409, 409]);
      const final = await server.api('GET', `/documents/${doc.documentId}`, { token });
      assert.equal(final.body.results[0]._version, 2);
    }
  });

  it('PUT /documents/:version replaces the main file (a new revision) and the attachment list', async () => {
    const pdf = await upload(server, token, makePdf());
    const doc = (await create({ pdfFile: { content: pdf } })).body.results[0];
    const next = await upload(server, token, makePdf({ pages: 3 }));
    const extra = await upload(server, token, Buffer.from('notes'), {
      name: 'notes.txt',
      type: 'text/plain',
    });
    const response = await server.api('PUT', '/documents/1', {
      token,
      body: {
        id: doc.documentId,
        body: { pdfFile: { content: next }, file: [{ content: extra, public: true }] },
      },
    });
    assert.equal(response.status, 200, response.text);
    const changed = response.body.results[0];
    assert.equal(changed.pdfFile.content, next);
    assert.equal(changed.pdfFile.pages, 3);
    assert.deepEqual(
      changed.file.map((f: { content: string; public: boolean }) => [f.content, f.public]),
      [[extra, true]],
    );
    assert.equal(
      (await server.api('GET', `/revisions/document/${doc.documentId}/2`, { token })).body.pdfFile.id,
      next,
    );
    assert.equal(
      (await server.api('GET', `/revisions/document/${doc.documentId}/1`, { token })).body.pdfFile.id,
      pdf,
    );
    const removed = await server.api('PUT', '/documents/2', {
      token,
      body: { id: doc.documentId, body: { file: [] } },
    });
    assert.deepEqual(removed.body.results[0].file, []);
  });

  it('POST /documents/bulk/create makes one document per file, all or none; more than 100 is 413', async () => {
    const files = [await upload(server, token, makePdf()), await upload(server, token, makePdf())];
    const response = await server.api('POST', '/documents/bulk/create', {
      token,
      body: { body: {}, bulkFiles: files.map((content, i) => ({ content, documentTitle: `Bulk ${i}` })) },
    });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.count, 2);
    assert.deepEqual(
      response.body.results.map((d: { documentTitle: string }) => d.documentTitle),
      ['Bulk 0', 'Bulk 1'],
    );
    const fresh = await upload(server, token, makePdf());
    const clash = await server.api('POST', '/documents/bulk/create', {
      token,
      body: { body: {}, bulkFiles: [{ content: fresh }, { content: files[0] }] },
    });
    assert.equal(clash.status, 400);
    assert.equal(clash.body.code, 'FILE_NOT_USABLE');
    const reuse = await server.api('POST', '/documents', {
      token,
      body: { body: { documentTitle: 'x', pdfFile: { content: fresh } } },
    });
    assert.equal(reuse.status, 200, 'the failed bulk request used nothing up');
    const many = await server.api('POST', '/documents/bulk/create', {
      token,
      body: { body: {}, bulkFiles: Array.from({ length: 101 }, () => ({ content: fresh })) },
    });
    assert.equal(many.status, 413);
  });

  it('PUT /documents/{id}/merge appends PDFs to the main file, which gets a new id and keeps its `pages` in pdfFile', async () => {
    const doc = (await create({ pdfFile: { content: await upload(server, token, makePdf({ pages: 2 })) } }))
      .body.results[0];
    const appendix = await upload(server, token, makePdf({ pages: 3 }));
    const merged = await server.api('PUT', `/documents/${doc.documentId}/merge`, {
      token,
      body: { version: 1, files: [appendix] },
    });
    assert.equal(merged.status, 200, merged.text);
    const result = merged.body.results[0];
    assert.notEqual(result.pdfFile.content, doc.pdfFile.content);
    assert.equal(doc.pdfFile.pages, 2);
    assert.equal(result.pdfFile.pages, 5, 'the merged main file is counted like an upload');
    const bytes = Buffer.from(
      await (
        await fetch(`${server.url}/api/v1/files/loadFile/hash/${result.pdfFile.content}?token=${token}`)
      ).arrayBuffer(),
    );
    const dir = mkdtempSync(join(tmpdir(), 'merge-'));
    writeFileSync(join(dir, 'm.pdf'), bytes);
    assert.match(execFileSync('qpdf', ['--show-npages', join(dir, 'm.pdf')]).toString(), /^5/);
  });

  it('PUT /documents/owner moves ownership only when the tenant enables it', async () => {
    const doc = (await create({})).body.results[0];
    await createUser(server, { name: 'new-owner' });
    const off = await server.api('PUT', '/documents/owner', {
      token,
      body: { id: doc.documentId, owner: 'new-owner' },
    });
    assert.equal(off.status, 403);
    await server.api('PUT', '/settings/properties', { token, body: { ownerTransferEnabled: true } });
    const on = await server.api('PUT', '/documents/owner', {
      token,
      body: { id: doc.documentId, owner: 'new-owner', version: 1 },
    });
    assert.equal(on.status, 200, on.text);
    assert.equal(on.body.results[0].owner, 'new-owner');
    const owner = await server.login('new-owner', 'user-password-1');
    assert.equal((await server.api('GET', `/documents/${doc.documentId}`, { token: owner })).status, 200);
  });

  it('bad files: a non-PDF, a truncated PDF, garbage and an encrypted PDF as pdfFile get 400 naming the problem', async () => {
    const pdf = makePdf();
    const dir = mkdtempSync(join(tmpdir(), 'enc-'));
    writeFileSync(join(dir, 'plain.pdf'), pdf);
    execFileSync('qpdf', [
      '--encrypt',
      'user-pw',
      'owner-pw',
      '256',
      '--',
      join(dir, 'plain.pdf'),
      join(dir, 'enc.pdf'),
    ]);
    const cases: [Buffer, RegExp][] = [
      [PNG_1PX, /not a PDF/],
      [pdf.subarray(0, pdf.length - 40), /truncated/],
      [
        Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(2000, 0x41), Buffer.from('\n%%EOF\n')]),
        /cannot be read|no pages|page tree/,
      ],
      [readFileSync(join(dir, 'enc.pdf')), /encrypted/],
    ];
    for (const [bytes, problem] of cases) {
      const id = await upload(server, token, bytes);
      const response = await create({ pdfFile: { content: id } });
      assert.equal(response.status, 400, `${problem}: ${response.text}`);
      assert.equal(response.body.code, 'VALIDATION_ERROR');
      assert.match(response.body.message, /^body\.pdfFile\.content: /);
      assert.match(response.body.message, problem);
    }
  });
});
