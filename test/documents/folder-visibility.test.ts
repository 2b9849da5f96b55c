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

  /** POST /share of `id` by alice. */
  const shareAs = (token: string, id: string, body: Record<string, unknown>) =>
    server.api('POST', '/share', { token, body: { id, ...body } });

  it('spec Folder, "Access is inherited": a folder shared with a user opens it and everything in it (nested folders, documents added later) on every read path, until the share is cancelled', async () => {
    const top = await folder('Deals', null, false);
    const nested = await folder('Deals 2026', top, false);
    const doc = await aDocumentIn('Deal A', nested);
    assert.deepEqual(await whatBobReads(doc, [top, nested]), everyRead(404, 2));

    const shared = await shareAs(alice, top, {
      type: 'folder',
      data: [{ sharePurpose: 'view', shareTo: 'bob', message: 'The deals folder' }],
    });
    assert.equal(shared.status, 200, shared.text);
    assert.equal(shared.body.length, 1);
    assert.equal(shared.body[0].sharedObjectType, 'folder');
    assert.equal(shared.body[0].sharedObjectEsId, top);
    assert.equal(shared.body[0].sharedObjectEsType, 'folder');
    assert.equal(shared.body[0].shareType, 'view');
    assert.deepEqual(shared.body[0].sharedWith, ['bob']);
    assert.deepEqual(await whatBobReads(doc, [top, nested]), everyRead(200, 2));

    // Added later, one level deeper still: inherited too.
    const deeper = await folder('Deals Q1', nested, false);
    const later = await aDocumentIn('Deal B', deeper);
    assert.deepEqual(await whatBobReads(later, [top, nested, deeper]), everyRead(200, 3));

    // Another user of the same organization is not let in by bob's share.
    const carol = (await aUser(server, { name: 'carol', organization: 'Team', rights })).token;
    assert.equal((await server.api('GET', `/documents/${later.id}`, { token: carol })).status, 404);
    assert.equal((await server.api('GET', `/folders/${top}`, { token: carol })).status, 404);

    // Revoking the folder share revokes what was inherited through it, at once.
    const revoked = await server.api('POST', '/share/cancel', { token: alice, body: { id: top } });
    assert.equal(revoked.status, 200, revoked.text);
    assert.deepEqual(await whatBobReads(doc, [top, nested]), everyRead(404, 2));
    assert.deepEqual(await whatBobReads(later, [top, nested, deeper]), everyRead(404, 3));
  });

  it('spec Sharing, "view = read-only, edit = edit rights", for a folder: view reads only; edit changes its documents and adds to it', async () => {
    const top = await folder('Projects', null, false);
    const doc = await aDocumentIn('Plan', top);
    const dave = (await aUser(server, { name: 'dave', organization: 'Team', rights })).token;
    const shared = await shareAs(alice, top, {
      data: [
        { sharePurpose: 'view', shareTo: 'bob' },
        {
          sharePurpose: 'edit',
          shareTo: 'dave',
          validUntil: new Date(Date.now() + 86_400_000).toISOString(),
        },
      ],
    });
    assert.equal(shared.status, 200, shared.text);
    const rename = (token: string, version: number) =>
      server.api('PUT', `/documents/edit/${version}`, {
        token,
        body: { id: doc.id, documentTitle: 'Plan v2' },
      });
    const addInto = async (token: string) => {
      const pdf = await upload(server, token, makePdf());
      return server.api('POST', '/documents', {
        token,
        body: { body: { documentTitle: 'Added', pdfFile: { content: pdf } }, optionalData: { folder: top } },
      });
    };
    assert.equal((await rename(bob, 1)).status, 403);
    const refused = await addInto(bob);
    assert.equal(refused.status, 403, refused.text);
    assert.match(refused.body.message, /shared with you for view/);
    const renamed = await rename(dave, 1);
    assert.equal(renamed.status, 200, renamed.text);
    const added = await addInto(dave);
    assert.equal(added.status, 200, added.text);
    // What dave added sits in the folder: bob, who may read the folder, reads it too.
    const addedId = added.body.results[0].documentId as string;
    assert.equal((await server.api('GET', `/documents/${addedId}`, { token: bob })).status, 200);
    // Sharing stays with who manages the folder.
    assert.equal(
      (await shareAs(dave, top, { data: [{ sharePurpose: 'view', shareTo: 'carol' }] })).status,
      403,
    );
  });

  it('a folder share carries what applies to a folder: users and groups of the tenant, view or edit; anything else is 400 naming the field, and a stranger gets 404', async () => {
    const top = await folder('Refusals', null, false);
    const refusals: [Record<string, unknown>, string][] = [
      [
        { data: [{ sharePurpose: 'sign', shareTo: 'bob' }] },
        '"data[0].sharePurpose" must be one of [view, edit] for a folder',
      ],
      [
        { data: [{ sharePurpose: 'view', shareTo: 'guest@example.org' }] },
        '"data[0].shareTo" must be a user or a group (organization) of the tenant',
      ],
      [
        { data: [{ sharePurpose: 'view', shareTo: 'bob', password: 'open-sesame' }] },
        '"data[0].password" does not apply to a folder share',
      ],
      [
        { data: [{ sharePurpose: 'view', shareTo: 'bob', rights: ['print'] }] },
        '"data[0].rights" does not apply to a folder share',
      ],
      [
        { data: [{ sharePurpose: 'view', shareTo: 'bob' }], sequential: true },
        '"sequential" does not apply to a folder share',
      ],
      [
        {
          data: [
            { sharePurpose: 'view', shareTo: 'bob' },
            { sharePurpose: 'edit', shareTo: 'Bob' },
          ],
        },
        '"data[1].shareTo" contains a duplicate value',
      ],
      [
        { type: 'd_default', data: [{ sharePurpose: 'view', shareTo: 'bob' }] },
        '"type" must be the type of the folder "id" names: "d_default" was sent, the folder is of type "folder"',
      ],
    ];
    for (const [body, message] of refusals) {
      const response = await shareAs(alice, top, body);
      assert.equal(response.status, 400, response.text);
      assert.equal(response.body.code, 'VALIDATION_ERROR');
      assert.ok(response.body.message.includes(message), `${response.body.message} has ${message}`);
    }
    // Nothing was shared by the refused calls.
    assert.equal((await server.api('GET', `/folders/${top}`, { token: bob })).status, 404);
    // Who may not see the folder learns nothing of it.
    const hidden = await shareAs(bob, top, { data: [{ sharePurpose: 'view', shareTo: 'bob' }] });
    assert.equal(hidden.status, 404, hidden.text);
  });

  it('a folder shared with a group (an organization of the tenant, by name or id) opens it to every member of that organization, until cancelled; a caller who is no global administrator names only their own', async () => {
    const erin = (await aUser(server, { name: 'erin', organization: 'Partners', rights })).token;
    const admin = await server.adminToken();
    const top = (
      await server.api('POST', '/folders', {
        token: admin,
        body: { name: 'For partners', isShared: false, parentFolderId: null },
      })
    ).body.id as string;
    const nested = (
      await server.api('POST', '/folders', {
        token: admin,
        body: { name: 'Inside', isShared: false, parentFolderId: top },
      })
    ).body.id as string;
    const pdf = await upload(server, admin, makePdf());
    const created = await server.api('POST', '/documents', {
      token: admin,
      body: {
        body: { documentTitle: 'Partner deal', pdfFile: { content: pdf } },
        optionalData: { folder: nested },
      },
    });
    assert.equal(created.status, 200, created.text);
    const docId = created.body.results[0].documentId as string;
    const reads = async (token: string) => ({
      folder: (await server.api('GET', `/folders/${top}`, { token })).status,
      nested: (await server.api('GET', `/folders/${nested}`, { token })).status,
      document: (await server.api('GET', `/documents/${docId}`, { token })).status,
      searched: (await server.api('POST', '/search', { token, body: { size: 100 } })).body.results.some(
        (r: { documentId: string }) => r.documentId === docId,
      ),
    });
    const open = { folder: 200, nested: 200, document: 200, searched: true };
    const closed = { folder: 404, nested: 404, document: 404, searched: false };
    assert.deepEqual(await reads(erin), closed);

    const shared = await shareAs(admin, top, { data: [{ sharePurpose: 'view', shareTo: 'partners' }] });
    assert.equal(shared.status, 200, shared.text);
    assert.deepEqual(shared.body[0].sharedWith, ['Partners']);
    assert.equal(typeof shared.body[0].groupId, 'string');
    assert.deepEqual(await reads(erin), open);
    // A member who joins the group later sees it too; members of other groups do not.
    const gus = (await aUser(server, { name: 'gus', organization: 'Partners', rights })).token;
    assert.deepEqual(await reads(gus), open);
    assert.deepEqual(await reads(bob), closed);

    assert.equal(
      (await server.api('POST', '/share/cancel', { token: admin, body: { id: top } })).status,
      200,
    );
    assert.deepEqual(await reads(erin), closed);

    // alice, a plain user of Team, shares with her own group by id, not with another.
    const own = await folder('Team only', null, false);
    const other = await shareAs(alice, own, { data: [{ sharePurpose: 'view', shareTo: 'Partners' }] });
    assert.equal(other.status, 400, other.text);
    assert.match(
      other.body.message,
      /"data\[0\]\.shareTo" must be a user or a group \(organization\) of the tenant/,
    );
    const teamId = await groupIdOf(alice, 'Team');
    const mine = await shareAs(alice, own, { data: [{ sharePurpose: 'view', shareTo: teamId }] });
    assert.equal(mine.status, 200, mine.text);
    assert.equal((await server.api('GET', `/folders/${own}`, { token: bob })).status, 200);
  });

  /** The id of a group (organization) as POST /groups/search lists it to the caller. */
  const groupIdOf = async (token: string, name: string) => {
    const found = await server.api('POST', '/groups/search', { token, body: { query: name } });
    assert.equal(found.status, 200, found.text);
    return found.body.results.find((g: { name: string }) => g.name === name).id as string;
  };
});
