import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { makePdf, PNG_1PX } from '../helpers/pdf.js';
import { assertError } from '../helpers/api-errors.js';
import { createUser, upload } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';

describe('contacts: the caller’s own address book (spec: Other resources; Files usage rule 1)', () => {
  const server = useServer();
  let ann: string;
  let bob: string;
  before(async () => {
    await createUser(server, { name: 'ann' });
    await createUser(server, { name: 'bob' });
    [ann, bob] = await Promise.all([
      server.login('ann', 'user-password-1'),
      server.login('bob', 'user-password-1'),
    ]);
  });

  const photo = (token: string) =>
    upload(server, token, PNG_1PX, { path: '/files/photo', name: 'face.png', type: 'image/png' });
  it('create, read, list, search, change and delete a contact', async () => {
    const face = await photo(ann);
    const created = await server.api('POST', '/contacts', {
      token: ann,
      body: {
        name: 'Carla Client',
        email: 'carla@client.example',
        phone: '+41 44 123 45 67',
        organisation: 'Client AG',
        photo: face,
      },
    });
    assert.equal(created.status, 200, created.text);
    const contact = created.body;
    assert.equal(contact.name, 'Carla Client');
    assert.equal(contact.email, 'carla@client.example');
    assert.equal(contact.phone, '+41 44 123 45 67');
    assert.equal(contact.organisation, 'Client AG');
    assert.equal(contact.photo, face);
    assert.equal(contact._version, 1);
    for (const key of ['id', 'createDate', 'modifyDate']) assert.ok(contact[key], key);

    assert.deepEqual((await server.api('GET', `/contacts/${contact.id}`, { token: ann })).body, contact);
    const list = await server.api('GET', '/contacts', { token: ann });
    assert.equal(list.status, 200, list.text);
    assert.equal(list.body.total, 1);
    assert.deepEqual(list.body.results, [contact]);

    for (const query of ['carla', 'CLIENT.EXAMPLE', 'client ag']) {
      const found = await server.api('POST', '/contacts/search', { token: ann, body: { query } });
      assert.equal(found.status, 200, found.text);
      assert.deepEqual(
        found.body.results.map((c: { id: string }) => c.id),
        [contact.id],
        query,
      );
    }
    const none = await server.api('POST', '/contacts/search', { token: ann, body: { query: '%' } });
    assert.equal(none.body.total, 0, 'LIKE wildcards are plain characters');

    const changed = await server.api('PUT', '/contacts', {
      token: ann,
      body: { id: contact.id, _version: 1, name: 'Carla C. Client', phone: null },
    });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.name, 'Carla C. Client');
    assert.equal(changed.body.phone, null);
    assert.equal(changed.body.email, 'carla@client.example', 'fields not sent stay');
    assert.equal(changed.body._version, 2);

    const stale = await server.api('PUT', '/contacts', {
      token: ann,
      body: { id: contact.id, _version: 1, name: 'Lost update' },
    });
    assertError(stale, 409, 'VERSION_MISMATCH');
    assert.equal(stale.body.message, 'Version mismatch');

    const deleted = await server.api('DELETE', `/contacts/${contact.id}`, { token: ann });
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual(deleted.body, { status: 'SUCCESS' });
    assertError(await server.api('GET', `/contacts/${contact.id}`, { token: ann }), 404, 'NOT_FOUND');
    assert.equal((await server.api('GET', '/contacts', { token: ann })).body.total, 0);
  });

  it('a contact belongs to the user who created it: another user gets 404 and never lists it', async () => {
    const created = await server.api('POST', '/contacts', { token: ann, body: { name: 'Private Pete' } });
    assert.equal(created.status, 200, created.text);
    const id = created.body.id as string;
    const admin = await server.adminToken();
    for (const token of [bob, admin]) {
      assertError(await server.api('GET', `/contacts/${id}`, { token }), 404, 'NOT_FOUND');
      assertError(
        await server.api('PUT', '/contacts', { token, body: { id, name: 'Mine now' } }),
        404,
        'NOT_FOUND',
      );
      assertError(await server.api('DELETE', `/contacts/${id}`, { token }), 404, 'NOT_FOUND');
      const search = await server.api('POST', '/contacts/search', { token, body: { query: 'pete' } });
      assert.equal(search.body.total, 0);
    }
    assert.equal((await server.api('GET', `/contacts/${id}`, { token: ann })).body.name, 'Private Pete');
    await server.api('DELETE', `/contacts/${id}`, { token: ann });
  });

  it('an array of up to 100 contacts is created all together and listed page by page; more is 413 LIMIT_EXCEEDED', async () => {
    const many = Array.from({ length: 100 }, (_, i) => ({ name: `Bulk ${String(i).padStart(3, '0')}` }));
    const created = await server.api('POST', '/contacts', { token: bob, body: many });
    assert.equal(created.status, 200, created.text);
    assert.equal(created.body.results.length, 100);
    assert.equal(created.body.results[7].name, 'Bulk 007', 'answers in request order');

    const page = await server.api('GET', '/contacts', { token: bob, query: { from: '10', size: '5' } });
    assert.equal(page.status, 200, page.text);
    assert.equal(page.body.total, 100);
    assert.equal(page.body.from, 10);
    assert.deepEqual(
      page.body.results.map((c: { name: string }) => c.name),
      ['Bulk 010', 'Bulk 011', 'Bulk 012', 'Bulk 013', 'Bulk 014'],
    );

    const tooMany = [...many, { name: 'One too many' }];
    assertError(await server.api('POST', '/contacts', { token: bob, body: tooMany }), 413, 'LIMIT_EXCEEDED');
    const search = await server.api('POST', '/contacts/search', { token: bob, body: { query: 'too many' } });
    assert.equal(search.body.total, 0, 'nothing of the refused request was created');
    assert.equal((await server.api('GET', '/contacts', { token: bob })).body.total, 100);
  });

  it('spec Files usage rule 1: a contact photo "must be unique, unused and uploaded with POST /files/photo"', async () => {
    const fromSaveFile = await upload(server, ann, makePdf());
    assertError(
      await server.api('POST', '/contacts', { token: ann, body: { name: 'Wrong', photo: fromSaveFile } }),
      400,
      'FILE_NOT_USABLE',
      'photo',
    );
    const fromSignature = await upload(server, ann, PNG_1PX, { path: '/files/signature', type: 'image/png' });
    const refused = await server.api('POST', '/contacts', {
      token: ann,
      body: { name: 'Wrong', photo: fromSignature },
    });
    assertError(refused, 400, 'FILE_NOT_USABLE', 'POST /files/photo');

    const face = await photo(ann);
    const first = await server.api('POST', '/contacts', { token: ann, body: { name: 'First', photo: face } });
    assert.equal(first.status, 200, first.text);
    const reused = await server.api('POST', '/contacts', {
      token: ann,
      body: { name: 'Second', photo: face },
    });
    assertError(reused, 400, 'FILE_NOT_USABLE', 'photo');
    assert.ok(reused.body.message.includes('already used'), reused.body.message);

    // In an array the field names the element; the same photo twice in one request is a reuse.
    const twice = await photo(ann);
    const bulk = await server.api('POST', '/contacts', {
      token: ann,
      body: [
        { name: 'Bulk photo one', photo: twice },
        { name: 'Bulk photo two', photo: twice },
      ],
    });
    assertError(bulk, 400, 'FILE_NOT_USABLE', '[1].photo');
    const search = await server.api('POST', '/contacts/search', {
      token: ann,
      body: { query: 'bulk photo' },
    });
    assert.equal(search.body.total, 0, 'all or none');

    // Another user's photo upload is not the caller's to use.
    const bobsFace = await photo(bob);
    assertError(
      await server.api('POST', '/contacts', { token: ann, body: { name: 'Stolen', photo: bobsFace } }),
      400,
      'FILE_NOT_USABLE',
      'photo',
    );

    // PUT /contacts: the current photo again is no change, a used one is refused, a new one is taken.
    const id = first.body.id as string;
    const same = await server.api('PUT', '/contacts', { token: ann, body: { id, photo: face } });
    assert.equal(same.status, 200, same.text);
    assertError(
      await server.api('PUT', '/contacts', { token: ann, body: { id, photo: fromSaveFile } }),
      400,
      'FILE_NOT_USABLE',
      'photo',
    );
    const other = await server.api('POST', '/contacts', { token: ann, body: { name: 'Other' } });
    assertError(
      await server.api('PUT', '/contacts', { token: ann, body: { id: other.body.id, photo: face } }),
      400,
      'FILE_NOT_USABLE',
      'photo',
    );
    const fresh = await photo(ann);
    const replaced = await server.api('PUT', '/contacts', { token: ann, body: { id, photo: fresh } });
    assert.equal(replaced.status, 200, replaced.text);
    assert.equal(replaced.body.photo, fresh);
    const removed = await server.api('PUT', '/contacts', { token: ann, body: { id, photo: null } });
    assert.equal(removed.body.photo, null);
    // The replaced photo stays used: "One photo hash cannot be used twice."
    assertError(
      await server.api('PUT', '/contacts', { token: ann, body: { id: other.body.id, photo: face } }),
      400,
      'FILE_NOT_USABLE',
      'photo',
    );
  });

  it('bodies are validated in Joi words and unknown keys are refused', async () => {
    const cases: [unknown, string][] = [
      [{ name: 'X', nickname: 'x' }, '"nickname" is not allowed'],
      [{ name: 'X', email: 'not-an-address' }, '"email" must be a valid email'],
      [{ email: 'x@example.test' }, '"name" is required'],
    ];
    for (const [body, message] of cases) {
      const response = await server.api('POST', '/contacts', { token: ann, body });
      assertError(response, 400, 'VALIDATION_ERROR', message);
    }
    assertError(
      await server.api('PUT', '/contacts', { token: ann, body: { name: 'No id' } }),
      400,
      'VALIDATION_ERROR',
      '"id" is required',
    );
  });
});
