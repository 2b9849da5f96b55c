import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createUser } from '../helpers/server.js';
import { aUser } from '../helpers/people.js';
import { useServer } from '../helpers/use-server.js';

describe('spec: User account table and administration (POST/PUT/DELETE /users)', () => {
  const server = useServer();
  let admin: string;
  before(async () => (admin = await server.adminToken()));
  /** The status POST /login answers for `name` and `password`. */
  const loginStatus = async (name: string, password: string) =>
    (await server.api('POST', '/login', { body: { name, password } })).status;

  it('active → suspended → active: suspension blocks login, existing sessions and API keys at once; reactivation restores them', async () => {
    const carol = { name: 'carol', email: 'Carol@Example.test', displayName: 'Carol' };
    const { id, token, apiKey: key } = await aUser(server, carol, { apiKey: true });

    const suspend = await server.api('PUT', `/users/${id}`, { token: admin, body: { status: 'suspended' } });
    assert.equal(suspend.status, 200);
    assert.deepEqual(suspend.body, { status: 'SUCCESS' });
    for (const credential of [token, key]) {
      const call = await server.api('GET', '/api/key', { token: credential });
      assert.equal(call.status, 401);
      assert.equal(call.body.code, 'UNAUTHENTICATED');
      assert.equal((await server.api('GET', '/login', { token: credential })).status, 401);
    }
    const login = await server.api('POST', '/login', {
      body: { name: 'carol', password: 'user-password-1' },
    });
    assert.equal(login.status, 401);
    assert.equal(login.body.code, 'UNAUTHENTICATED');

    const user = await server.api('GET', `/users/${id}`, { token: admin });
    assert.equal(user.body.status, 'suspended');
    assert.equal(user.body.email, 'carol@example.test');

    const restore = await server.api('PUT', `/users/${id}`, { token: admin, body: { status: 'active' } });
    assert.equal(restore.status, 200);
    assert.equal((await server.api('GET', '/api/key', { token })).status, 200, 'data and associations kept');
    assert.equal((await server.api('GET', '/api/key', { token: key })).status, 200);
    assert.equal(await loginStatus('carol', 'user-password-1'), 200);
  });

  it('active or suspended → deleted: DELETE /users/:id is permanent; tokens die and the name can log in no more', async () => {
    const id = await createUser(server, { name: 'dave' });
    const token = await server.login('dave', 'user-password-1');
    await server.api('PUT', `/users/${id}`, { token: admin, body: { status: 'suspended' } });
    const removed = await server.api('DELETE', `/users/${id}`, { token: admin });
    assert.deepEqual(removed.body, { status: 'SUCCESS' });
    assert.equal((await server.api('GET', '/api/key', { token })).status, 401);
    assert.equal(await loginStatus('dave', 'user-password-1'), 401);
    assert.equal((await server.api('GET', `/users/${id}`, { token: admin })).status, 404);
    assert.equal((await server.api('DELETE', `/users/${id}`, { token: admin })).status, 404);
  });

  it('administrator-only calls by others answer 403 FORBIDDEN', async () => {
    const id = await createUser(server, { name: 'erin' });
    const token = await server.login('erin', 'user-password-1');
    const calls = [
      server.api('POST', '/users', { token, body: { name: 'frank', password: 'password-123' } }),
      server.api('PUT', `/users/${id}`, { token, body: { status: 'suspended' } }),
      server.api('DELETE', `/users/${id}`, { token }),
      server.api('PUT', '/settings/properties', { token, body: { isLlmEnabled: true } }),
      server.api('PUT', '/counters', { token, body: { counters: { invoice: 1 } } }),
    ];
    for (const response of await Promise.all(calls)) {
      assert.equal(response.status, 403, response.text);
      assert.equal(response.body.code, 'FORBIDDEN');
    }
  });

  it('an organization administrator manages only their own organization: others’ users are not found', async () => {
    const outsider = await createUser(server, { name: 'outsider', organization: 'Other Org' });
    const token = (
      await aUser(server, { name: 'orgadmin', role: 'organizationAdmin', organization: 'Sales' })
    ).token;
    assert.equal(
      (await server.api('PUT', `/users/${outsider}`, { token, body: { status: 'suspended' } })).status,
      404,
    );
    assert.equal((await server.api('DELETE', `/users/${outsider}`, { token })).status, 404);
    const member = await createUser(server, { name: 'salesrep' }, token);
    const read = await server.api('GET', `/users/${member}`, { token });
    assert.equal(read.status, 200);
    const adminView = await server.api('GET', `/users/${member}`, { token: admin });
    assert.equal(adminView.body.organization, read.body.organization, 'joins the creator’s organization');
    const elsewhere = await server.api('POST', '/users', {
      token,
      body: { name: 'misplaced', password: 'password-123', organization: 'Other Org' },
    });
    assert.equal(elsewhere.status, 403);
  });

  it('no administrator grants a role above their own or rights they do not hold', async () => {
    const token = (await aUser(server, { name: 'orgadmin2', role: 'organizationAdmin' })).token;
    const role = await server.api('POST', '/users', {
      token,
      body: { name: 'wannabe', password: 'password-123', role: 'globalAdmin' },
    });
    assert.equal(role.status, 403);
    const rights = await server.api('POST', '/users', {
      token,
      body: { name: 'wannabe', password: 'password-123', rights: ['use_all_documents_export'] },
    });
    assert.equal(rights.status, 403);
    const fine = await server.api('POST', '/users', {
      token,
      body: { name: 'helper', password: 'password-123', role: 'sign', rights: ['view_attachments'] },
    });
    assert.equal(fine.status, 200);
    const login = await server.api('POST', '/login', { body: { name: 'helper', password: 'password-123' } });
    assert.deepEqual(login.body.rights, ['view_attachments']);
    assert.equal(login.body.user.role, 'sign');
  });

  it('a taken name is 409 and nothing is written', async () => {
    await createUser(server, { name: 'grace' });
    const again = await server.api('POST', '/users', {
      token: admin,
      body: { name: 'GRACE', password: 'password-123' },
    });
    assert.equal(again.status, 409);
  });

  it('POST /users takes up to 100 users at once, all or none; more is 413 LIMIT_EXCEEDED', async () => {
    const batch = Array.from({ length: 3 }, (_, i) => ({ name: `batch-${i}`, password: 'password-123' }));
    const ok = await server.api('POST', '/users', { token: admin, body: batch });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.results.length, 3);
    const clash = await server.api('POST', '/users', {
      token: admin,
      body: [
        { name: 'batch-new', password: 'password-123' },
        { name: 'batch-0', password: 'password-123' },
      ],
    });
    assert.equal(clash.status, 409);
    assert.equal(await loginStatus('batch-new', 'password-123'), 401);
    const tooMany = Array.from({ length: 101 }, (_, i) => ({ name: `many-${i}` }));
    const refused = await server.api('POST', '/users', { token: admin, body: tooMany });
    assert.equal(refused.status, 413);
    assert.equal(refused.body.code, 'LIMIT_EXCEEDED');
  });

  it('PUT /users/activate: a user created without a password sets one with the activation token and is logged in (returnToken honoured)', async () => {
    const created = await server.api('POST', '/users', { token: admin, body: { name: 'heidi' } });
    assert.equal(created.status, 200);
    const activationToken: string = created.body.activationToken;
    assert.ok(activationToken);
    const activated = await server.api('PUT', '/users/activate', {
      body: { activationToken, password: 'heidi-password', returnToken: false },
    });
    assert.equal(activated.status, 200);
    assert.equal(activated.body.logged, true);
    assert.equal(activated.body.token, undefined);
    assert.equal(activated.body.hasPassword, true);
    const reuse = await server.api('PUT', '/users/activate', {
      body: { activationToken, password: 'other-password' },
    });
    assert.equal(reuse.status, 401);
    assert.equal(await loginStatus('heidi', 'heidi-password'), 200);
  });

  it('a new password ends the user’s sessions', async () => {
    const id = await createUser(server, { name: 'ivan' });
    const token = await server.login('ivan', 'user-password-1');
    await server.api('PUT', `/users/${id}`, { token: admin, body: { password: 'new-password-1' } });
    assert.equal((await server.api('GET', '/api/key', { token })).status, 401);
    assert.equal(await loginStatus('ivan', 'new-password-1'), 200);
  });

  it('administrators cannot suspend or delete themselves', async () => {
    const me = (await server.api('GET', '/login', { token: admin })).body.user.id;
    assert.equal(
      (await server.api('PUT', `/users/${me}`, { token: admin, body: { status: 'suspended' } })).status,
      403,
    );
    assert.equal((await server.api('DELETE', `/users/${me}`, { token: admin })).status, 403);
  });

  it('POST /groups/search with includeUserCount counts members and administrators apart from lite roles', async () => {
    await createUser(server, { name: 'g-member', organization: 'Legal' });
    await createUser(server, { name: 'g-admin', organization: 'Legal', role: 'organizationAdmin' });
    await createUser(server, { name: 'g-reader', organization: 'Legal', role: 'read' });
    await createUser(server, { name: 'g-signer', organization: 'Legal', role: 'sign' });
    const found = await server.api('POST', '/groups/search', {
      token: admin,
      body: { query: 'leg', includeUserCount: true },
    });
    assert.equal(found.status, 200);
    assert.equal(found.body.total, 1);
    assert.equal(found.body.results[0].name, 'Legal');
    assert.equal(found.body.results[0].userCount, 2);
    assert.equal(found.body.results[0].liteUserCount, 2);
    const plain = await server.api('POST', '/groups/search', { token: admin, body: {} });
    assert.ok(plain.body.total >= 3);
    assert.equal(plain.body.results[0].userCount, undefined);
    const member = await server.login('g-member', 'user-password-1');
    const own = await server.api('POST', '/groups/search', { token: member, body: {} });
    assert.deepEqual(
      own.body.results.map((g: { name: string }) => g.name),
      ['Legal'],
    );
  });

  it('every change is in the audit log, in the same transaction, with the actor’s login name', async () => {
    const id = await createUser(server, { name: 'judy' });
    await server.api('PUT', `/users/${id}`, { token: admin, body: { status: 'suspended' } });
    const rows = await server.app.deps.db
      .selectFrom('audit_log')
      .select(['activity_type', 'actor_id', 'object_id', 'request_id'])
      .where('object_id', '=', id)
      .orderBy('seq')
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.activity_type, r.actor_id]),
      [
        ['userCreated', 'admin@example.test'],
        ['userSuspended', 'admin@example.test'],
      ],
    );
    assert.ok(rows.every((r) => r.request_id));
    const logins = await server.app.deps.db
      .selectFrom('audit_log')
      .select('actor_id')
      .where('activity_type', '=', 'logged')
      .execute();
    assert.ok(logins.length > 0);
  });
});
