import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { makePdf, PNG_1PX } from '../helpers/pdf.js';
import { assertError } from '../helpers/api-errors.js';
import { createUser, upload } from '../helpers/server.js';
import { aUser } from '../helpers/people.js';
import { aSignedDocument } from '../helpers/documents.js';
import { useServer } from '../helpers/use-server.js';

const at = (x: number, y: number) => ({ percentX: x, percentY: y, percentWidth: 0.25, percentHeight: 0.08 });

describe('user photos, signature and initials images (spec Files usage rules 1 and 2)', () => {
  const server = useServer();
  let admin: string;
  before(async () => (admin = await server.adminToken()));

  const image = (token: string, path: string) =>
    upload(server, token, PNG_1PX, { path, name: 'image.png', type: 'image/png' });
  const readUser = async (id: string, token = admin) =>
    (await server.api('GET', `/users/${id}`, { token })).body;

  it('rule 1: a user photo (POST /users, PUT /users/:id) "must be unique, unused and uploaded with POST /files/photo"', async () => {
    const face = await image(admin, '/files/photo');
    const id = await createUser(server, { name: 'paula', photo: face });
    assert.equal((await readUser(id)).photo, face);

    const reused = await server.api('POST', '/users', {
      token: admin,
      body: { name: 'paul', password: 'user-password-1', photo: face },
    });
    assertError(reused, 400, 'FILE_NOT_USABLE', 'photo');
    assert.ok(reused.body.message.includes('already used'), reused.body.message);
    const fromSaveFile = await upload(server, admin, makePdf());
    const wrongEndpoint = await server.api('POST', '/users', {
      token: admin,
      body: { name: 'paul', password: 'user-password-1', photo: fromSaveFile },
    });
    assertError(wrongEndpoint, 400, 'FILE_NOT_USABLE', 'POST /files/photo');
    assert.ok(wrongEndpoint.body.message.startsWith('photo'), wrongEndpoint.body.message);

    const shared = await image(admin, '/files/photo');
    const bulk = await server.api('POST', '/users', {
      token: admin,
      body: [
        { name: 'pia', password: 'user-password-1', photo: shared },
        { name: 'pio', password: 'user-password-1', photo: shared },
      ],
    });
    assertError(bulk, 400, 'FILE_NOT_USABLE', '[1].photo');
    assert.equal(
      (await server.api('POST', '/login', { body: { name: 'pia', password: 'user-password-1' } })).status,
      401,
    );

    // PUT /users/:id: the current photo again is no change, a used or wrong one is refused, a new one is taken.
    const same = await server.api('PUT', `/users/${id}`, { token: admin, body: { photo: face } });
    assert.equal(same.status, 200, same.text);
    const other = await createUser(server, { name: 'otto' });
    // Refused: the photo another user has, then a file of the wrong kind (a signature image).
    for (const photo of [face, await image(admin, '/files/signature')]) {
      assertError(
        await server.api('PUT', `/users/${other}`, { token: admin, body: { photo } }),
        400,
        'FILE_NOT_USABLE',
        'photo',
      );
    }
    const fresh = await image(admin, '/files/photo');
    const changed = await server.api('PUT', `/users/${other}`, { token: admin, body: { photo: fresh } });
    assert.equal(changed.status, 200, changed.text);
    assert.equal((await readUser(other)).photo, fresh);
    const cleared = await server.api('PUT', `/users/${other}`, { token: admin, body: { photo: null } });
    assert.equal(cleared.status, 200, cleared.text);
    assert.equal((await readUser(other)).photo, null);
    assertError(
      await server.api('PUT', `/users/${id}`, { token: admin, body: { photo: fresh } }),
      400,
      'FILE_NOT_USABLE',
      'photo',
    );
  });

  it('rule 2: POST /configuration/images assigns the caller’s own POST /files/signature and /files/initials uploads, nothing else', async () => {
    const sina = (await aUser(server, { name: 'sina' })).token;
    const signature = await image(sina, '/files/signature');
    const initials = await image(sina, '/files/initials');
    const set = await server.api('POST', '/configuration/images', {
      token: sina,
      body: {
        signature: [{ imageId: signature, name: 'Full signature' }],
        initials: [{ imageId: initials }],
      },
    });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.body, {
      status: 'SUCCESS',
      signature: [{ imageId: signature, name: 'Full signature' }],
      initials: [{ imageId: initials, name: 'image.png' }],
    });
    const login = await server.api('GET', '/login', { token: sina });
    assert.deepEqual(login.body.user.config.signature, [{ imageId: signature, name: 'Full signature' }]);
    assert.deepEqual(login.body.user.config.initials, [{ imageId: initials, name: 'image.png' }]);

    const refused: [Record<string, unknown>, string][] = [
      [{ signature: [{ imageId: await upload(server, sina, makePdf()) }] }, 'POST /files/signature'],
      [{ signature: [{ imageId: await image(sina, '/files/photo') }] }, 'POST /files/signature'],
      [{ signature: [{ imageId: initials }] }, 'POST /files/signature'],
      [{ initials: [{ imageId: signature }] }, 'POST /files/initials'],
      [{ signature: [{ imageId: await image(admin, '/files/signature') }] }, 'signature[0].imageId'],
      [{ signature: [{ imageId: signature }, { imageId: 'no-such-file' }] }, 'signature[1].imageId'],
    ];
    for (const [body, mentions] of refused) {
      const response = await server.api('POST', '/configuration/images', { token: sina, body });
      assertError(response, 400, 'FILE_NOT_USABLE', mentions);
    }
    const unchanged = await server.api('GET', '/login', { token: sina });
    assert.deepEqual(unchanged.body.user.config.signature, [{ imageId: signature, name: 'Full signature' }]);

    // A list left out stays; an empty list clears.
    const cleared = await server.api('POST', '/configuration/images', {
      token: sina,
      body: { initials: [] },
    });
    assert.equal(cleared.status, 200, cleared.text);
    assert.deepEqual(cleared.body.initials, []);
    assert.equal(cleared.body.signature.length, 1);
    assertError(
      await server.api('POST', '/configuration/images', { token: sina, body: {} }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('rule 2: PUT /users/:id/upload assigns a user’s images, by the user or an administrator; images the administrator uploaded pass to the user, who signs with them', async () => {
    const uliId = await createUser(server, { name: 'uli' });
    await createUser(server, { name: 'vera' });
    const [uli, vera] = await Promise.all([
      server.login('uli', 'user-password-1'),
      server.login('vera', 'user-password-1'),
    ]);
    /** PUT /users/:id/upload of uli's images, as `token`'s user. */
    const uploadForUli = (token: string, body: Record<string, unknown>) =>
      server.api('PUT', `/users/${uliId}/upload`, { token, body });

    const own = await image(uli, '/files/signature');
    const self = await server.api('PUT', '/users/me/upload', {
      token: uli,
      body: { signature: [{ imageId: own, name: 'Mine' }] },
    });
    assert.equal(self.status, 200, self.text);
    assert.deepEqual(self.body.signature, [{ imageId: own, name: 'Mine' }]);

    const byAdmin = await image(admin, '/files/signature');
    const adminLists = async () => (await server.api('GET', '/login', { token: admin })).body.user.config;
    assert.ok((await adminLists()).signature.some((e: { imageId: string }) => e.imageId === byAdmin));
    const assigned = await uploadForUli(admin, {
      signature: [
        { imageId: own, name: 'Mine' },
        { imageId: byAdmin, name: 'From admin' },
      ],
    });
    assert.equal(assigned.status, 200, assigned.text);
    assert.deepEqual(
      (await readUser(uliId)).config.signature.map((e: { imageId: string }) => e.imageId),
      [own, byAdmin],
    );
    assert.ok(
      !(await adminLists()).signature.some((e: { imageId: string }) => e.imageId === byAdmin),
      'it left the administrator’s list',
    );

    // The user signs with the image an administrator assigned.
    await aSignedDocument(server, uli, {
      title: 'Signed with an assigned image',
      signatures: [{ type: 'signature', blob: byAdmin, pages: [1], position: at(0.1, 0.8) }],
    });

    // Not assignable: a photo upload, and another user's images, even by an administrator.
    assertError(
      await uploadForUli(admin, { initials: [{ imageId: await image(admin, '/files/photo') }] }),
      400,
      'FILE_NOT_USABLE',
      'initials[0].imageId',
    );
    const verasOwn = await image(vera, '/files/signature');
    assertError(
      await uploadForUli(admin, { signature: [{ imageId: verasOwn }] }),
      400,
      'FILE_NOT_USABLE',
      'signature[0].imageId',
    );
    // Someone else's account is not a non-administrator's to change: 404.
    assertError(await uploadForUli(vera, { signature: [{ imageId: verasOwn }] }), 404, 'NOT_FOUND');
  });
});
