import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { makePdf } from '../helpers/pdf.js';
import { upload } from '../helpers/server.js';
import { aUser } from '../helpers/people.js';
import { useServer } from '../helpers/use-server.js';

/**
 * spec Folder: "Access is inherited: nested folders under a shared folder are shared too, and under a
 * private folder private."
 *
 * Read carefully, a nested folder takes its parent's setting whatever its own `isShared` says: the
 * rule is neither "the nearest folder's own setting wins" (a shared folder inside a private one would
 * then be shared, against "under a private folder private") nor "any private folder above makes it
 * private" counted on own settings (a private folder inside a shared one would then be private,
 * against "under a shared folder are shared too"). So the outermost folder decides for the whole tree.
 */
describe('spec Folder: "nested folders under a shared folder are shared too, and under a private folder private" on every read path', () => {
  const server = useServer();
  let alice: string;
  let bob: string;
  const rights = [
    'use_file_management',
    'use_document_management',
    'add_file_attachments',
    'view_attachments',
    'download_attachment',
  ];

  before(async () => {
    alice = (await aUser(server, { name: 'alice', organization: 'Team', rights })).token;
    bob = (await aUser(server, { name: 'bob', organization: 'Team', rights })).token;
  });

  const folder = async (name: string, parentFolderId: string | null, isShared: boolean) => {
    const response = await server.api('POST', '/folders', {
      token: alice,
      body: { name, isShared, parentFolderId },
    });
    assert.equal(response.status, 200, response.text);
    return response.body.id as string;
  };
  /** A document of alice's with a main PDF and one attachment, in `folderId`. */
  const aDocumentIn = async (title: string, folderId: string) => {
    const pdf = await upload(server, alice, makePdf());
    const attachment = await upload(server, alice, Buffer.from(`${title} attachment`), {
      name: 'note.txt',
      type: 'text/plain',
    });
    const response = await server.api('POST', '/documents', {
      token: alice,
      body: {
        body: { documentTitle: title, pdfFile: { content: pdf }, file: [{ content: attachment }] },
        optionalData: { folder: folderId },
      },
    });
    assert.equal(response.status, 200, response.text);
    return { id: response.body.results[0].documentId as string, pdf, attachment };
  };

  /** The status every read path answers bob for the document, its folders and its files. */
  const whatBobReads = async (doc: { id: string; pdf: string; attachment: string }, folders: string[]) => {
    const status = async (method: string, path: string, body?: unknown) =>
      (await server.api(method, path, { token: bob, ...(body ? { body } : {}) })).status;
    const search = async (body: Record<string, unknown>) => {
      const response = await server.api('POST', '/search', { token: bob, body });
      assert.equal(response.status, 200, response.text);
      return response.body.results.map((r: { documentId: string }) => r.documentId) as string[];
    };
    const searched = [
      ...(await search({ size: 100 })),
      ...(await search({ size: 100, kind: 'folder' })),
      ...(await search({ size: 100, folderId: folders.at(-1) })),
    ];
    const listed = [];
    for (const id of ['root', ...folders]) {
      const response = await server.api('GET', `/folders/${id}`, { token: bob });
      if (response.status === 200) listed.push(...response.body.items.map((i: { id: string }) => i.id));
    }
    return {
      document: await status('GET', `/documents/${doc.id}`),
      folders: await Promise.all(folders.map((f) => status('GET', `/documents/${f}`))),
      folderReads: await Promise.all(folders.map((f) => status('GET', `/folders/${f}`))),
      searchFindsDocument: searched.includes(doc.id),
      searchFindsFolders: folders.map((f) => searched.includes(f)),
      listingsShowDocument: listed.includes(doc.id),
      locate: await status('POST', '/search/locate', { id: doc.id }),
      mainFile: await status('GET', `/files/loadFile/hash/${doc.pdf}`),
      attachmentFile: await status('GET', `/files/loadFile/hash/${doc.attachment}`),
      zip: await status('GET', `/attachments/${doc.id}/zip`),
      attachment: await status('GET', `/attachments/${doc.id}/${doc.attachment}`),
      revision: await status('GET', `/revisions/document/${doc.id}/1`),
      verify: await status('GET', `/documents/${doc.id}/verify`),
    };
  };

  /** What whatBobReads tells when every read path answers `status` (200: found; 404: hidden), for `folders` folders. */
  const everyRead = (status: 200 | 404, folders: number) => {
    const found = status === 200;
    return {
      document: status,
      folders: Array<number>(folders).fill(status),
      folderReads: Array<number>(folders).fill(status),
      searchFindsDocument: found,
      searchFindsFolders: Array<boolean>(folders).fill(found),
      listingsShowDocument: found,
      locate: status,
      mainFile: status,
      attachmentFile: status,
      zip: status,
      attachment: status,
      revision: status,
      verify: status,
    };
  };

  it('a shared folder inside a private folder is private: 404 on GET, folder reads, locate, files, attachments, revisions and verify; absent from search and listings', async () => {
    const privateTop = await folder('Private top', null, false);
    const sharedInside = await folder('Shared inside private', privateTop, true);
    const doc = await aDocumentIn('Secret contract', sharedInside);
    assert.deepEqual(await whatBobReads(doc, [privateTop, sharedInside]), everyRead(404, 2));
    const own = await server.api('GET', `/folders/${sharedInside}`, { token: alice });
    assert.equal(own.body.isShared, false, 'isShared tells the setting in force, inherited from the top');
  });

  it('deeper still: a shared folder two levels under a private one stays private', async () => {
    const privateTop = await folder('Private again', null, false);
    const shared = await folder('Shared', privateTop, true);
    const sharedDeeper = await folder('Shared deeper', shared, true);
    const doc = await aDocumentIn('Deep secret', sharedDeeper);
    const seen = await whatBobReads(doc, [privateTop, shared, sharedDeeper]);
    assert.equal(seen.document, 404);
    assert.deepEqual(seen.folders, [404, 404, 404]);
    assert.equal(seen.searchFindsDocument, false);
    assert.deepEqual(seen.searchFindsFolders, [false, false, false]);
  });

  it('a private folder inside a shared folder is shared too: every read path answers the organization', async () => {
    const sharedTop = await folder('Team top', null, true);
    const privateInside = await folder('Private inside shared', sharedTop, false);
    const doc = await aDocumentIn('Team contract', privateInside);
    assert.deepEqual(await whatBobReads(doc, [sharedTop, privateInside]), everyRead(200, 2));
    const located = await server.api('POST', '/search/locate', { token: bob, body: { id: doc.id } });
    assert.deepEqual(
      located.body.path.map((p: { id: string }) => p.id),
      [sharedTop, privateInside],
    );
    const read = await server.api('GET', `/folders/${sharedTop}`, { token: bob });
    assert.deepEqual(read.body.items, [
      {
        id: privateInside,
        kind: 'folder',
        name: 'Private inside shared',
        _version: 1,
        isShared: true,
        modifyDate: read.body.items[0].modifyDate,
      },
    ]);
  });

  it('moving a private top-level folder into a shared one opens it, and moving it out closes it again', async () => {
    const sharedTop = await folder('Open', null, true);
    const privateTop = await folder('Closed', null, false);
    const doc = await aDocumentIn('Moved', privateTop);
    const get = async () => (await server.api('GET', `/documents/${doc.id}`, { token: bob })).status;
    assert.equal(await get(), 404);
    const moved = await server.api('PUT', '/documents/edit/1', {
      token: alice,
      body: { id: privateTop, folder: sharedTop },
    });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(await get(), 200);
    const back = await server.api('PUT', '/documents/edit/2', {
      token: alice,
      body: { id: privateTop, folder: null },
    });
    assert.equal(back.status, 200, back.text);
    assert.equal(await get(), 404);
  });
});
