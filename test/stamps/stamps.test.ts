import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { makePdf, PNG_1PX } from '../helpers/pdf.js';
import { assertError } from '../helpers/api-errors.js';
import { createUser, startServer, upload } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';

const JPEG = Buffer.from(
  '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgyPC4zNDL/wAALCAABAAEBAREA/8QAFAABAAAAAAAAAAAAAAAAAAAACf/EABQQAQAAAAAAAAAAAAAAAAAAAAD/2gAIAQEAAD8AKp//2Q==',
  'base64',
);

describe('spec Stamp: "personal and organization stamps, the latter usable by authorized users as team stamps"', () => {
  const server = useServer();
  let lea: string; // user, Legal
  let leo: string; // user, Legal
  let lena: string; // organizationAdmin, Legal
  let sam: string; // user, Sales
  let samAdmin: string; // organizationAdmin, Sales
  before(async () => {
    await createUser(server, { name: 'lea', organization: 'Legal' });
    await createUser(server, { name: 'leo', organization: 'Legal' });
    await createUser(server, { name: 'lena', organization: 'Legal', role: 'organizationAdmin' });
    await createUser(server, { name: 'sam', organization: 'Sales' });
    await createUser(server, { name: 'sam-admin', organization: 'Sales', role: 'organizationAdmin' });
    const login = (name: string) => server.login(name, 'user-password-1');
    [lea, leo, lena, sam, samAdmin] = await Promise.all([
      login('lea'),
      login('leo'),
      login('lena'),
      login('sam'),
      login('sam-admin'),
    ]);
  });

  const image = (token: string, bytes = PNG_1PX) =>
    upload(server, token, bytes, { name: 'stamp.png', type: 'image/png' });
  const create = async (token: string, body: Record<string, unknown>) =>
    server.api('POST', '/stamps', { token, body });
  const newStamp = async (token: string, extra: Record<string, unknown> = {}) => {
    const response = await create(token, { name: 'Approved', file: await image(token), ...extra });
    assert.equal(response.status, 200, response.text);
    return response.body as { id: string; _version: number; file: string; organization: string };
  };
  it('a personal stamp belongs to its owner: the record, its image; others of the organization or outside get 404', async () => {
    const file = await image(lea);
    const created = await create(lea, { name: 'Lea’s stamp', file });
    assert.equal(created.status, 200, created.text);
    const stamp = created.body;
    assert.equal(stamp.name, 'Lea’s stamp');
    assert.equal(stamp.scope, 'personal');
    assert.equal(stamp.owner, 'lea');
    assert.equal(stamp.file, file);
    assert.equal(stamp._version, 1);
    for (const key of ['id', 'organization', 'createDate', 'modifyDate']) assert.ok(stamp[key], key);

    assert.deepEqual((await server.api('GET', `/stamps/${stamp.id}`, { token: lea })).body, stamp);
    const bytes = await server.api('GET', `/stamps/${stamp.id}/image`, { token: lea });
    assert.equal(bytes.status, 200);
    assert.equal(bytes.headers.get('content-type'), 'image/png');
    for (const token of [leo, lena, sam]) {
      assertError(await server.api('GET', `/stamps/${stamp.id}`, { token }), 404, 'NOT_FOUND');
      assertError(await server.api('GET', `/stamps/${stamp.id}/image`, { token }), 404, 'NOT_FOUND');
      assertError(
        await server.api('PUT', `/stamps/${stamp.id}`, { token, body: { name: 'Mine now' } }),
        404,
        'NOT_FOUND',
      );
      assertError(await server.api('DELETE', `/stamps/${stamp.id}`, { token }), 404, 'NOT_FOUND');
    }
  });

  it('organization stamps: created, changed and deleted by the organization’s administrators, usable by its members (team stamps); outsiders get 404', async () => {
    const refused = await create(lea, { name: 'Team', file: await image(lea), scope: 'organization' });
    assertError(refused, 403, 'FORBIDDEN');
    const otherOrg = await create(samAdmin, {
      name: 'Not yours',
      file: await image(samAdmin),
      scope: 'organization',
      organization: (await newStamp(lena)).organization,
    });
    assertError(otherOrg, 403, 'FORBIDDEN');

    const team = await newStamp(lena, { name: 'Legal department', scope: 'organization' });
    const read = await server.api('GET', `/stamps/${team.id}`, { token: leo });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.scope, 'organization');
    assert.equal(read.body.owner, null);
    assert.equal((await server.api('GET', `/stamps/${team.id}/image`, { token: lea })).status, 200);

    assertError(
      await server.api('PUT', `/stamps/${team.id}`, { token: leo, body: { name: 'Changed' } }),
      403,
      'FORBIDDEN',
    );
    assertError(await server.api('DELETE', `/stamps/${team.id}`, { token: leo }), 403, 'FORBIDDEN');
    for (const token of [sam, samAdmin]) {
      assertError(await server.api('GET', `/stamps/${team.id}`, { token }), 404, 'NOT_FOUND');
      assertError(await server.api('GET', `/stamps/${team.id}/image`, { token }), 404, 'NOT_FOUND');
      assertError(await server.api('DELETE', `/stamps/${team.id}`, { token }), 404, 'NOT_FOUND');
    }
    // A global or super administrator manages every organization's stamps.
    const admin = await server.adminToken();
    const renamed = await server.api('PUT', `/stamps/${team.id}`, {
      token: admin,
      body: { name: 'Legal', version: 1 },
    });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body._version, 2);
    assert.deepEqual(await server.api('DELETE', `/stamps/${team.id}`, { token: lena }).then((r) => r.body), {
      status: 'SUCCESS',
    });
    assertError(await server.api('GET', `/stamps/${team.id}`, { token: leo }), 404, 'NOT_FOUND');
  });

  it('usage rule 2: "Stamps: internal via POST /files/saveFile" — other endpoints’ files, used files and others’ files are 400 FILE_NOT_USABLE', async () => {
    for (const path of ['/files/photo', '/files/signature', '/files/initials']) {
      const file = await upload(server, lea, PNG_1PX, { name: 'x.png', type: 'image/png', path });
      const response = await create(lea, { name: 'Wrong endpoint', file });
      assertError(response, 400, 'FILE_NOT_USABLE');
      assert.match(response.body.message, /^file: the file must be uploaded with POST \/files\/saveFile/);
    }
    const used = await newStamp(lea);
    const again = await create(lea, { name: 'Reused', file: used.file });
    assertError(again, 400, 'FILE_NOT_USABLE');
    assert.match(again.body.message, /already used/);
    assertError(
      await create(leo, { name: 'Someone else’s', file: await image(lea) }),
      400,
      'FILE_NOT_USABLE',
    );
    const pdf = await upload(server, lea, makePdf());
    const notImage = await create(lea, { name: 'A PDF', file: pdf });
    assertError(notImage, 400, 'FILE_NOT_USABLE');
    assert.match(notImage.body.message, /PNG or JPEG/);
    assert.equal((await create(lea, { name: 'JPEG', file: await image(lea, JPEG) })).status, 200);
    // The same rules hold for a new image; a refused change leaves the stamp as it was.
    const stamp = await newStamp(lea);
    assertError(
      await server.api('PUT', `/stamps/${stamp.id}`, { token: lea, body: { file: used.file } }),
      400,
      'FILE_NOT_USABLE',
    );
    assert.equal((await server.api('GET', `/stamps/${stamp.id}`, { token: lea })).body._version, 1);
    const replaced = await server.api('PUT', `/stamps/${stamp.id}`, {
      token: lea,
      body: { file: await image(lea) },
    });
    assert.equal(replaced.status, 200, replaced.text);
    assert.notEqual(replaced.body.file, stamp.file);
  });

  it('PUT /stamps/:id with a stale version is 409 VERSION_MISMATCH', async () => {
    const stamp = await newStamp(lea);
    const first = await server.api('PUT', `/stamps/${stamp.id}`, {
      token: lea,
      body: { name: 'A', version: 1 },
    });
    assert.equal(first.body._version, 2);
    const stale = await server.api('PUT', `/stamps/${stamp.id}`, {
      token: lea,
      body: { name: 'B', version: 1 },
    });
    assertError(stale, 409, 'VERSION_MISMATCH');
    assert.equal(stale.body.message, 'Version mismatch');
  });

  it('POST /stamps/search lists the stamps the caller may see, by name, with total and paging', async () => {
    const server2 = await startServer();
    try {
      await createUser(server2, { name: 'ann', organization: 'Ops' });
      await createUser(server2, { name: 'ops-admin', organization: 'Ops', role: 'organizationAdmin' });
      await createUser(server2, { name: 'eve', organization: 'Elsewhere' });
      const login = (name: string) => server2.login(name, 'user-password-1');
      const [ann, opsAdmin, eve] = await Promise.all([login('ann'), login('ops-admin'), login('eve')]);
      const make = async (token: string, name: string, scope = 'personal') => {
        const file = await upload(server2, token, PNG_1PX, { name: 's.png', type: 'image/png' });
        const response = await server2.api('POST', '/stamps', { token, body: { name, file, scope } });
        assert.equal(response.status, 200, response.text);
      };
      await make(ann, 'Paid');
      await make(ann, 'Received 100%');
      await make(opsAdmin, 'Ops team', 'organization');
      await make(opsAdmin, 'Admin private');
      await make(eve, 'Eve’s');
      const search = (token: string, body: Record<string, unknown>) =>
        server2.api('POST', '/stamps/search', { token, body });

      const all = await search(ann, {});
      assert.equal(all.status, 200, all.text);
      assert.equal(all.body.total, 3);
      assert.deepEqual(
        all.body.results.map((s: { name: string }) => s.name),
        ['Ops team', 'Paid', 'Received 100%'],
      );
      assert.equal((await search(ann, { query: '100%' })).body.total, 1);
      assert.equal((await search(ann, { query: '%' })).body.total, 1, 'wildcards are matched literally');
      assert.equal((await search(ann, { query: 'PAI' })).body.results[0].name, 'Paid');
      assert.equal((await search(ann, { scope: 'organization' })).body.total, 1);
      const page = await search(ann, { from: 1, size: 1 });
      assert.deepEqual([page.body.total, page.body.from, page.body.results.length], [3, 1, 1]);
      assert.deepEqual(
        (await search(eve, {})).body.results.map((s: { name: string }) => s.name),
        ['Eve’s'],
      );
      assert.equal((await search(await server2.adminToken(), { scope: 'organization' })).body.total, 1);
    } finally {
      await server2.close();
    }
  });
});
