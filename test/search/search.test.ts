import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { aUser } from '../helpers/people.js';
import { useServer } from '../helpers/use-server.js';

describe('spec Documents: POST /search and POST /search/locate over what the caller may see', () => {
  const server = useServer();
  let ann: string;
  let bob: string;
  let eve: string;
  const ids: Record<string, string> = {};

  before(async () => {
    ann = (await aUser(server, { name: 'ann' })).token;
    bob = (await aUser(server, { name: 'bob', displayName: 'Bob Builder' })).token;
    // A super-administrator naming an organization that does not exist creates it.
    eve = (await aUser(server, { name: 'eve', organization: 'Elsewhere' })).token;
    const folder = async (token: string, name: string, isShared: boolean, parentFolderId?: string) => {
      const response = await server.api('POST', '/folders', {
        token,
        body: { name, isShared, parentFolderId },
      });
      assert.equal(response.status, 200, response.text);
      return response.body.id as string;
    };
    const doc = async (
      token: string,
      title: string,
      extra: Record<string, unknown> = {},
      folderId?: string,
    ) => {
      const response = await server.api('POST', '/documents', {
        token,
        body: {
          body: { documentTitle: title, ...extra },
          ...(folderId ? { optionalData: { folder: folderId } } : {}),
        },
      });
      assert.equal(response.status, 200, response.text);
      return response.body.results[0].documentId as string;
    };
    ids.shared = await folder(bob, 'Team', true);
    ids.nested = await folder(bob, 'Team/2026', false, ids.shared);
    ids.inNested = await doc(bob, 'Quarterly numbers', {}, ids.nested);
    ids.private = await doc(bob, 'Bob private diary');
    ids.sharedWithAnn = await doc(bob, 'Lease for Ann');
    const shared = await server.api('POST', '/share', {
      token: bob,
      body: { id: ids.sharedWithAnn, data: [{ sharePurpose: 'view', shareTo: 'ann' }] },
    });
    assert.equal(shared.status, 200, shared.text);
    ids.own = await doc(ann, 'Ann invoice', {
      customFields: [{ key: 'client', type: 'string', value: 'Zebracorp Holdings' }],
    });
  });

  const search = (body: Record<string, unknown>, token = ann) =>
    server.api('POST', '/search', { token, body });
  const names = (response: { body: { results: { documentId: string }[] } }) =>
    new Set(response.body.results.map((r) => Object.keys(ids).find((k) => ids[k] === r.documentId)));

  it('answers {from, total, results, users}: own, shared with the caller and inherited through shared folders, never the rest', async () => {
    const response = await search({ from: 0, size: 50 });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.from, 0);
    assert.deepEqual(names(response), new Set(['own', 'sharedWithAnn', 'shared', 'nested', 'inNested']));
    assert.equal(response.body.total, 5);
    // Results are shaped like GET /documents/:id.
    const lease = response.body.results.find(
      (r: { documentId: string }) => r.documentId === ids.sharedWithAnn,
    );
    assert.equal(lease.documentTitle, 'Lease for Ann');
    assert.equal(typeof lease._version, 'number');
    assert.deepEqual(
      response.body.users.map((u: { name: string }) => u.name),
      ['ann', 'bob'],
    );
    assert.equal(response.body.users[1].displayName, 'Bob Builder');
    // Someone in another organization sees none of it.
    assert.equal((await search({}, eve)).body.total, 0);
  });

  it('text looks in titles and custom field values; filters, sort and paging', async () => {
    assert.deepEqual(names(await search({ text: 'LEASE' })), new Set(['sharedWithAnn']));
    assert.deepEqual(names(await search({ text: 'zebracorp' })), new Set(['own']));
    assert.deepEqual(
      names(await search({ text: 'diary' })),
      new Set(),
      'invisible documents are never found',
    );
    assert.deepEqual(names(await search({ text: '100%' })), new Set());
    assert.deepEqual(names(await search({ kind: 'folder' })), new Set(['shared', 'nested']));
    assert.deepEqual(names(await search({ folderId: ids.nested })), new Set(['inNested']));
    const sorted = await search({ sort: 'documentTitle', kind: 'document' });
    assert.deepEqual(
      sorted.body.results.map((r: { documentTitle: string }) => r.documentTitle),
      ['Ann invoice', 'Lease for Ann', 'Quarterly numbers'],
    );
    const page = await search({ sort: 'documentTitle', kind: 'document', from: 1, size: 1 });
    assert.equal(page.body.total, 3);
    assert.deepEqual(
      page.body.results.map((r: { documentTitle: string }) => r.documentTitle),
      ['Lease for Ann'],
    );
    // Past the end: no row carries the count, which is still given.
    const past = await search({ kind: 'document', from: 5, size: 2 });
    assert.deepEqual([past.body.total, past.body.results], [3, []]);
    const bad = await search({ size: 0 });
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /"size" must be greater than or equal to 1/);
  });

  it('POST /search/locate gives the folder path and the position in the default order; invisible is 404', async () => {
    const located = await server.api('POST', '/search/locate', { token: ann, body: { id: ids.inNested } });
    assert.equal(located.status, 200, located.text);
    assert.deepEqual(
      located.body.path.map((p: { name: string }) => p.name),
      ['Team', 'Team/2026'],
    );
    const page = await search({ from: located.body.from, size: 1 });
    assert.equal(page.body.results[0].documentId, ids.inNested);
    const hidden = await server.api('POST', '/search/locate', { token: ann, body: { id: ids.private } });
    assert.equal(hidden.status, 404);
  });
});
