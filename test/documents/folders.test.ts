import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { makePdf } from '../helpers/pdf.js';
import { upload } from '../helpers/server.js';
import { aUser } from '../helpers/people.js';
import { useServer } from '../helpers/use-server.js';

describe('spec Folders: nesting, inherited sharing, moving and cascade delete', () => {
  const server = useServer();
  let alice: string;
  let bob: string;
  let carol: string;
  before(async () => {
    alice = (await aUser(server, { name: 'alice', organization: 'Team' })).token;
    bob = (await aUser(server, { name: 'bob', organization: 'Team' })).token;
    carol = (await aUser(server, { name: 'carol', organization: 'Elsewhere' })).token;
  });

  const folder = async (
    token: string,
    name: string,
    parentFolderId: string | null = null,
    isShared = false,
  ) => {
    const response = await server.api('POST', '/folders', {
      token,
      body: { name, isShared, parentFolderId },
    });
    assert.equal(response.status, 200, response.text);
    return response.body.id as string;
  };
  const doc = async (token: string, title: string, folderId?: string) => {
    const response = await server.api('POST', '/documents', {
      token,
      body: { body: { documentTitle: title }, ...(folderId ? { optionalData: { folder: folderId } } : {}) },
    });
    assert.equal(response.status, 200, response.text);
    return response.body.results[0].documentId as string;
  };
  const visible = async (token: string, id: string) =>
    (await server.api('GET', `/documents/${id}`, { token })).status;

  it('access is inherited: nested folders under a shared folder are shared with the organization, under a private one private', async () => {
    const shared = await folder(alice, 'Shared', null, true);
    const nested = await folder(alice, 'Nested', shared);
    const deep = await doc(alice, 'Deep', nested);
    const privateFolder = await folder(alice, 'Private');
    const hidden = await doc(alice, 'Hidden', privateFolder);
    assert.equal(await visible(bob, deep), 200);
    assert.equal(await visible(bob, nested), 200);
    assert.equal(await visible(bob, hidden), 404);
    assert.equal(await visible(carol, deep), 404, 'other organizations do not see it');
    const read = await server.api('GET', `/documents/${deep}`, { token: alice });
    assert.deepEqual(read.body.results[0].folder, {
      global: { level: 2, parentFolderId: nested, name: 'Nested' },
    });
    const content = await server.api('GET', `/folders/${shared}`, { token: bob });
    assert.deepEqual(
      content.body.items.map((i: { name: string }) => i.name),
      ['Nested'],
    );
  });

  it('placing a document in a folder needs rights on the folder (rule 4)', async () => {
    const privateFolder = await folder(alice, 'Mine');
    const refused = await server.api('POST', '/documents', {
      token: bob,
      body: { body: { documentTitle: 'x' }, optionalData: { folder: privateFolder } },
    });
    assert.equal(refused.status, 400);
  });

  it('moving a document and a folder with PUT /documents/edit/:version; a folder cannot move into itself', async () => {
    const a = await folder(alice, 'A');
    const b = await folder(alice, 'B', a);
    const d = await doc(alice, 'Movable');
    const moved = await server.api('PUT', '/documents/edit/1', { token: alice, body: { id: d, folder: b } });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.body.results[0].folder.global.parentFolderId, b);
    const loop = await server.api('PUT', '/documents/edit/1', { token: alice, body: { id: a, folder: b } });
    assert.equal(loop.status, 400);
    const root = await server.api('PUT', '/documents/edit/2', {
      token: alice,
      body: { id: d, folder: null },
    });
    assert.equal(root.body.results[0].folder, undefined);
    const share = await server.api('PUT', '/documents/edit/1', {
      token: alice,
      body: { id: a, isShared: true },
    });
    assert.equal(share.status, 200);
    assert.equal(await visible(bob, b), 200);
  });

  it('DELETE /documents with hardDelete=true on a folder removes nested folders and documents', async () => {
    const top = await folder(alice, 'Top');
    const mid = await folder(alice, 'Mid', top);
    const docs = [await doc(alice, 'd1', top), await doc(alice, 'd2', mid)];
    const response = await server.api('DELETE', '/documents', {
      token: alice,
      query: { hardDelete: 'true' },
      body: { documents: [{ id: top }] },
    });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.body, { errors: false, count: 4, items: [] });
    for (const id of [top, mid, ...docs]) assert.equal(await visible(alice, id), 404);
    const rows = await server.app.deps.db
      .selectFrom('documents')
      .select('id')
      .where('id', 'in', [top, mid, ...docs])
      .execute();
    assert.equal(rows.length, 0, 'permanent');
  });

  it('partial failure: content without edit permission stays, with its folders, and is listed in items', async () => {
    const top = await folder(alice, 'Team folder', null, true);
    const sub = await folder(alice, 'Sub', top);
    const mine = await doc(alice, 'Alice doc', sub);
    const bobs = await doc(bob, 'Bob doc', sub);
    const other = await doc(alice, 'Alice top doc', top);
    const response = await server.api('DELETE', '/documents', {
      token: alice,
      query: { hardDelete: 'true' },
      body: { documents: [{ id: top }] },
    });
    assert.equal(response.status, 200);
    assert.equal(response.body.errors, true);
    assert.equal(response.body.count, 2);
    assert.deepEqual(
      response.body.items.map((i: { id: string; error: string }) => [i.id, i.error.split(':')[0]]),
      [
        [bobs, 'no edit permission'],
        [sub, 'folder not empty'],
        [top, 'folder not empty'],
      ],
    );
    assert.equal(await visible(alice, mine), 404);
    assert.equal(await visible(alice, other), 404);
    assert.equal(await visible(bob, bobs), 200);
    assert.equal(await visible(alice, sub), 200);
  });

  it('soft delete hides a document; unknown ids are reported, not fatal', async () => {
    const d = await doc(alice, 'Soft');
    const response = await server.api('DELETE', '/documents', {
      token: alice,
      body: { documents: [{ id: d }, { id: 'nope' }] },
    });
    assert.equal(response.body.count, 1);
    assert.deepEqual(response.body.items, [{ id: 'nope', error: 'not found' }]);
    assert.equal(await visible(alice, d), 404);
  });
});

describe('attachments: rights and downloads (spec Authentication 7, Endpoints)', () => {
  const server = useServer();
  let admin: string;
  before(async () => (admin = await server.adminToken()));

  it('view_attachments shows `file` and allows downloads; download_attachment allows loadFile; add_file_attachments allows adding', async () => {
    const a = await upload(server, admin, Buffer.from('first attachment'), {
      name: 'a.txt',
      type: 'text/plain',
    });
    const b = await upload(server, admin, Buffer.from('second'), { name: 'a.txt', type: 'text/plain' });
    const pdf = await upload(server, admin, makePdf());
    const created = await server.api('POST', '/documents', {
      token: admin,
      body: {
        body: {
          documentTitle: 'With attachments',
          pdfFile: { content: pdf },
          file: [{ content: a, public: true }, { content: b }],
        },
      },
    });
    const doc = created.body.results[0];
    assert.deepEqual(
      doc.file.map((f: { public: boolean }) => f.public),
      [true, false],
    );

    const zip = await fetch(`${server.url}/api/v1/attachments/${doc.documentId}/zip?token=${admin}`);
    assert.equal(zip.status, 200);
    const dir = mkdtempSync(join(tmpdir(), 'zip-'));
    writeFileSync(join(dir, 'a.zip'), Buffer.from(await zip.arrayBuffer()));
    const listing = execFileSync('python3', [
      '-c',
      'import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; print(sorted(n+":"+z.read(n).decode() for n in z.namelist()))',
      join(dir, 'a.zip'),
    ]).toString();
    assert.match(listing, /'a \(2\)\.txt:second', 'a\.txt:first attachment'/);
    const one = await server.api('GET', `/attachments/${doc.documentId}/${a}`, { token: admin });
    assert.equal(one.text, 'first attachment');

    const reader = (await aUser(server, { name: 'reader', role: 'read', rights: [] })).token;
    const move = await server.api('PUT', '/documents/owner', {
      token: admin,
      body: { id: doc.documentId, owner: 'reader' },
    });
    assert.equal(move.status, 403, 'owner transfer is off by default');
    await server.api('PUT', '/settings/properties', { token: admin, body: { ownerTransferEnabled: true } });
    await server.api('PUT', '/documents/owner', {
      token: admin,
      body: { id: doc.documentId, owner: 'reader' },
    });
    const seen = await server.api('GET', `/documents/${doc.documentId}`, { token: reader });
    assert.equal(seen.status, 200);
    assert.equal(seen.body.results[0].file, undefined, 'no view_attachments: no attachments shown');
    assert.equal(
      (await server.api('GET', `/attachments/${doc.documentId}/zip`, { token: reader })).status,
      403,
    );
    assert.equal(
      (await server.api('GET', `/attachments/${doc.documentId}/${a}`, { token: reader })).status,
      403,
    );
    assert.equal((await server.api('GET', `/files/loadFile/hash/${a}`, { token: reader })).status, 403);
    assert.equal(
      (await server.api('GET', `/files/loadFile/hash/${pdf}`, { token: reader })).status,
      200,
      'the main file is not an attachment',
    );
    const add = await server.api('PUT', '/documents/1', {
      token: reader,
      body: { id: doc.documentId, body: { file: [] } },
    });
    assert.equal(add.status, 403, 'no add_file_attachments');
  });
});

describe('templates (spec Template)', () => {
  const server = useServer();
  let token: string;
  before(async () => (token = await server.adminToken()));

  it('POST, GET and PUT /templates keep signFields, signEntities, sequential, category, type and the __ fields', async () => {
    const file = await upload(server, token, makePdf());
    const data = {
      name: 'NDA',
      documentType: 'd_default',
      file,
      sequential: true,
      category: 'legal',
      type: 'sign',
      signEntities: [{ type: 'user', quorum: 1, userRoleName: 'Signer', shareType: 'sign', order: 1 }],
      signFields: [
        {
          type: 'signature',
          pages: [1],
          position: { percentX: 0.1, percentY: 0.8, percentWidth: 0.2, percentHeight: 0.05 },
          required: true,
        },
      ],
    };
    const created = await server.api('POST', '/templates', { token, body: { data } });
    assert.equal(created.status, 200, created.text);
    const record = (await server.api('GET', `/templates/${created.body.id}`, { token })).body;
    assert.equal(record.__id, created.body.id);
    assert.equal(record.__addedBy, 'admin@example.test');
    assert.equal(typeof record.__addedOn, 'string');
    assert.equal(typeof record.__owner, 'string');
    assert.ok(Array.isArray(record.__users) && Array.isArray(record.__groups));
    assert.deepEqual(record.signFields, data.signFields);
    assert.equal(record.sequential, true);
    const bad = await server.api('POST', '/templates', {
      token,
      body: { data: { name: 'x', thumbnail: 'y' } },
    });
    assert.equal(bad.body.message, 'Request validation errors: BODY ERRORS: "data.thumbnail" is not allowed');
    const far = await server.api('POST', '/templates', {
      token,
      body: {
        data: {
          name: 'x',
          signFields: [
            {
              type: 'signature',
              position: { percentX: 1.5, percentY: 0, percentWidth: 0.1, percentHeight: 0.1 },
            },
          ],
        },
      },
    });
    assert.equal(
      far.body.message,
      'Request validation errors: BODY ERRORS: "data.signFields[0].position.percentX" must be less than or equal to 1',
    );
    const edited = await server.api('PUT', '/templates', {
      token,
      body: { id: created.body.id, version: 1, data: { ...data, name: 'NDA v2' } },
    });
    assert.equal(edited.status, 200, edited.text);
    assert.deepEqual(edited.body.results, [{ id: created.body.id, _version: 2 }]);
    assert.equal(
      (await server.api('PUT', '/templates', { token, body: { id: created.body.id, version: 1, data } }))
        .status,
      409,
    );
    assert.equal((await server.api('GET', `/templates/${created.body.id}`, { token })).body.name, 'NDA v2');
  });
});
