import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { makePdf, PNG_1PX } from '../helpers/pdf.js';
import { upload } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';

describe('spec Files: the file usage rules (each file hash is used once)', () => {
  const server = useServer();
  let token: string;
  before(async () => (token = await server.adminToken()));

  const newDoc = (
    pdfFile: string,
    extra: Record<string, unknown> = {},
    optionalData?: Record<string, unknown>,
  ) =>
    server.api('POST', '/documents', {
      token,
      body: {
        body: { documentTitle: 'Doc', pdfFile: { content: pdfFile }, ...extra },
        ...(optionalData ? { optionalData } : {}),
      },
    });

  function assertNotUsable(
    response: { status: number; body: { code: string; message: string } },
    field: string,
  ) {
    assert.equal(response.status, 400, JSON.stringify(response.body));
    assert.equal(response.body.code, 'FILE_NOT_USABLE', response.body.message);
    assert.ok(response.body.message.startsWith(`${field}: `), response.body.message);
  }

  it('rule 8: a main file already used is refused naming the field; cloneMainFile makes a copy instead', async () => {
    const pdf = await upload(server, token, makePdf());
    assert.equal((await newDoc(pdf)).status, 200);
    assertNotUsable(await newDoc(pdf), 'body.pdfFile.content');
    const cloned = await newDoc(pdf, {}, { cloneMainFile: true });
    assert.equal(cloned.status, 200);
    assert.notEqual(cloned.body.results[0].pdfFile.content, pdf, 'the document has its own copy');
  });

  it('rule 8: attachments already used are refused; cloneFiles copies them', async () => {
    const a = await upload(server, token, Buffer.from('a'), { name: 'a.txt', type: 'text/plain' });
    assert.equal(
      (await newDoc(await upload(server, token, makePdf()), { file: [{ content: a }] })).status,
      200,
    );
    assertNotUsable(
      await newDoc(await upload(server, token, makePdf()), { file: [{ content: a }] }),
      'body.file[0].content',
    );
    const cloned = await newDoc(
      await upload(server, token, makePdf()),
      { file: [{ content: a }] },
      { cloneFiles: true },
    );
    assert.equal(cloned.status, 200);
  });

  it('rule 3: the same hash several times in one request is one use', async () => {
    const a = await upload(server, token, Buffer.from('same'), { name: 'same.txt', type: 'text/plain' });
    const response = await newDoc(await upload(server, token, makePdf()), {
      file: [{ content: a }, { content: a }],
    });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.results[0].file.length, 1);
  });

  it('rule 2: files from the wrong upload endpoint are refused (a signature image is no main file or attachment)', async () => {
    const signature = await upload(server, token, PNG_1PX, {
      path: '/files/signature',
      name: 's.png',
      type: 'image/png',
    });
    assertNotUsable(await newDoc(signature), 'body.pdfFile.content');
    const photo = await upload(server, token, PNG_1PX, {
      path: '/files/photo',
      name: 'p.png',
      type: 'image/png',
    });
    assertNotUsable(
      await newDoc(await upload(server, token, makePdf()), { file: [{ content: photo }] }),
      'body.file[0].content',
    );
  });

  it('another user’s upload and unknown ids are not usable', async () => {
    assertNotUsable(await newDoc('0'.repeat(32)), 'body.pdfFile.content');
  });

  it('rules 6 and 8: a file held by a draft stays usable by a document ("draft-only"); cloneMainFile gives the draft its own copy', async () => {
    const pdf = await upload(server, token, makePdf());
    const draft = await server.api('POST', '/drafts', {
      token,
      body: { data: { documentTitle: 'D', pdfFile: { content: pdf } } },
    });
    assert.equal(draft.status, 200, draft.text);
    assert.equal(draft.body.data.pdfFile.content, pdf);
    const second = await server.api('POST', '/drafts', {
      token,
      body: { data: { pdfFile: { content: pdf } } },
    });
    assert.equal(second.status, 200, 'a draft does not use the file up');
    assert.equal((await newDoc(pdf)).status, 200, 'draft-only use allows the document');
    const late = await server.api('POST', '/drafts', {
      token,
      body: { data: { pdfFile: { content: pdf } } },
    });
    assertNotUsable(late, 'data.pdfFile.content');
    const cloned = await server.api('POST', '/drafts', {
      token,
      body: { data: { pdfFile: { content: pdf } }, cloneMainFile: true },
    });
    assert.equal(cloned.status, 200);
    const copy = cloned.body.data.pdfFile.content;
    assert.notEqual(copy, pdf);
    assert.equal((await newDoc(copy)).status, 200, 'the draft’s copy is usable by a document');
  });

  it('rule 6: PUT /drafts/:id/:version with cloneFiles copies new attachments; a stale version is 409', async () => {
    const a = await upload(server, token, Buffer.from('x'), { name: 'x.txt', type: 'text/plain' });
    const draft = (await server.api('POST', '/drafts', { token, body: { data: { documentTitle: 'D' } } }))
      .body;
    const changed = await server.api('PUT', `/drafts/${draft.id}/1`, {
      token,
      body: { data: { file: [{ content: a }] }, cloneFiles: true },
    });
    assert.equal(changed.status, 200, changed.text);
    assert.notEqual(changed.body.data.file[0].content, a);
    assert.equal(changed.body._version, 2);
    assert.equal(
      (await server.api('PUT', `/drafts/${draft.id}/1`, { token, body: { data: {} } })).status,
      409,
    );
    const thumbnail = await server.api('POST', '/drafts', { token, body: { data: { thumbnail: 'x' } } });
    assert.equal(
      thumbnail.body.message,
      'Request validation errors: BODY ERRORS: "data.thumbnail" is not allowed',
    );
    const fetched = await server.api(
      'GET',
      `/attachments/draft/${draft.id}/${changed.body.data.file[0].content}`,
      { token },
    );
    assert.equal(fetched.status, 200);
    assert.equal(fetched.text, 'x');
  });

  it('rule 7: PUT /documents/:version takes new attachments only when unused or draft-only', async () => {
    const doc = (await newDoc(await upload(server, token, makePdf()))).body.results[0];
    const used = await upload(server, token, Buffer.from('u'), { name: 'u.txt', type: 'text/plain' });
    await newDoc(await upload(server, token, makePdf()), { file: [{ content: used }] });
    assertNotUsable(
      await server.api('PUT', '/documents/1', {
        token,
        body: { id: doc.documentId, body: { file: [{ content: used }] } },
      }),
      'body.file[0].content',
    );
    const held = await upload(server, token, Buffer.from('h'), { name: 'h.txt', type: 'text/plain' });
    await server.api('POST', '/drafts', { token, body: { data: { file: [{ content: held }] } } });
    const ok = await server.api('PUT', '/documents/1', {
      token,
      body: { id: doc.documentId, body: { file: [{ content: held }] } },
    });
    assert.equal(ok.status, 200, ok.text);
  });

  it('rule 7: "In PUT /documents/:version and PUT /documents/edit/:version, new attachments (`body.file`) must be unused or used only in a draft; a changed main file (external documents, `body.pdfFile`) likewise"', async () => {
    const doc = (await newDoc(await upload(server, token, makePdf()))).body.results[0];
    const used = await upload(server, token, Buffer.from('u'), { name: 'u.txt', type: 'text/plain' });
    await newDoc(await upload(server, token, makePdf()), { file: [{ content: used }] });
    assertNotUsable(
      await server.api('PUT', `/documents/edit/${doc._version}`, {
        token,
        body: { id: doc.documentId, file: [{ content: used }] },
      }),
      'body.file[0].content',
    );
    const held = await upload(server, token, Buffer.from('h'), { name: 'h.txt', type: 'text/plain' });
    await server.api('POST', '/drafts', { token, body: { data: { file: [{ content: held }] } } });
    const attached = await server.api('PUT', `/documents/edit/${doc._version}`, {
      token,
      body: { id: doc.documentId, file: [{ content: held, public: true }] },
    });
    assert.equal(attached.status, 200, attached.text);
    assert.deepEqual(
      attached.body.results[0].file.map((f: { content: string }) => f.content),
      [held],
    );

    const usedPdf = await upload(server, token, makePdf());
    await newDoc(usedPdf);
    assertNotUsable(
      await server.api('PUT', `/documents/edit/${attached.body.results[0]._version}`, {
        token,
        body: { id: doc.documentId, pdfFile: { content: usedPdf } },
      }),
      'body.pdfFile.content',
    );
    const freshPdf = await upload(server, token, makePdf({ pages: 2 }));
    const replaced = await server.api('PUT', `/documents/edit/${attached.body.results[0]._version}`, {
      token,
      body: { id: doc.documentId, pdfFile: { content: freshPdf } },
    });
    assert.equal(replaced.status, 200, replaced.text);
    assert.equal(replaced.body.results[0].pdfFile.content, freshPdf);
    assert.equal(replaced.body.results[0]._version, attached.body.results[0]._version + 1, 'one change');
  });

  it('rule 5: a template file must be unused, or cloneFile set', async () => {
    const pdf = await upload(server, token, makePdf());
    const first = await server.api('POST', '/templates', {
      token,
      body: { data: { name: 'T1', file: pdf } },
    });
    assert.equal(first.status, 200, first.text);
    assertNotUsable(
      await server.api('POST', '/templates', { token, body: { data: { name: 'T2', file: pdf } } }),
      'data.file',
    );
    const cloned = await server.api('POST', '/templates', {
      token,
      body: { data: { name: 'T3', file: pdf }, cloneFile: true },
    });
    assert.equal(cloned.status, 200);
    const record = await server.api('GET', `/templates/${cloned.body.id}`, { token });
    assert.notEqual(record.body.file, pdf);
  });

  it('rule 4: a definition templateFile must be a new, unused file', async () => {
    const pdf = await upload(server, token, makePdf());
    const first = await server.api('POST', '/definitions/documents/name', {
      token,
      body: { name: 'invoice', templateFile: pdf },
    });
    assert.equal(first.status, 200, first.text);
    assertNotUsable(
      await server.api('POST', '/definitions/documents/name', {
        token,
        body: { name: 'receipt', templateFile: pdf },
      }),
      'templateFile',
    );
    const fresh = await upload(server, token, makePdf());
    const changed = await server.api('PUT', '/definitions/documents/invoice', {
      token,
      body: { templateFile: fresh, description: 'Invoices' },
    });
    assert.equal(changed.status, 200);
    assert.equal(changed.body.templateFile, fresh);
    const doc = await server.api('POST', '/documents', {
      token,
      body: { body: { documentTitle: 'I', documentType: 'invoice' } },
    });
    assert.equal(doc.status, 200);
    const unknown = await server.api('POST', '/documents', {
      token,
      body: { body: { documentTitle: 'I', documentType: 'nope' } },
    });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.message, /"body.documentType" must name a document definition/);
  });

  it('claiming is a compare-and-set: two requests racing for one file, one wins', async () => {
    const pdf = await upload(server, token, makePdf());
    const results = await Promise.all([newDoc(pdf), newDoc(pdf), newDoc(pdf)]);
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 400, 400]);
  });
});

describe('spec Limits: attachments per document and their total size', () => {
  const server = useServer();
  let token: string;
  before(async () => (token = await server.adminToken()));

  const attachments = async (n: number, bytes: number) => {
    const ids: { content: string }[] = [];
    for (let i = 0; i < n; i++)
      ids.push({
        content: await upload(server, token, Buffer.alloc(bytes, i), {
          name: `${i}.bin`,
          type: 'application/octet-stream',
        }),
      });
    return ids;
  };

  it('20 attachments are allowed; 21 are refused with 413 LIMIT_EXCEEDED', async () => {
    const ok = await server.api('POST', '/documents', {
      token,
      body: { body: { documentTitle: 'ok', file: await attachments(20, 10) } },
    });
    assert.equal(ok.status, 200, ok.text);
    const tooMany = await server.api('POST', '/documents', {
      token,
      body: { body: { documentTitle: 'x', file: await attachments(21, 10) } },
    });
    assert.equal(tooMany.status, 413);
    assert.equal(tooMany.body.code, 'LIMIT_EXCEEDED');
  });

  it('attachments total at most 5 × dropZoneMaxSize: within passes, beyond is 413', async () => {
    await server.api('PUT', '/settings/properties', { token, body: { dropZoneMaxSize: 1 } });
    const MB = 1024 * 1024;
    const within = await server.api('POST', '/documents', {
      token,
      body: { body: { documentTitle: 'w', file: await attachments(5, MB) } },
    });
    assert.equal(within.status, 200, within.text);
    const beyond = await server.api('POST', '/documents', {
      token,
      body: { body: { documentTitle: 'b', file: await attachments(6, MB) } },
    });
    assert.equal(beyond.status, 413);
    assert.match(beyond.body.message, /at most 5 MB/);
  });
});
