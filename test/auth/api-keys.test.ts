import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { aUser } from '../helpers/people.js';
import { useServer } from '../helpers/use-server.js';

const YEAR = 365 * 86_400_000;

describe('spec: API key (GET/POST /api/key, DELETE /api/key/:token)', () => {
  const clock = new ManualClock(new Date());
  const server = useServer({ clock });
  let token: string;
  before(async () => {
    token = (await aUser(server, { name: 'integrator' })).token;
  });

  it('POST /api/key returns the whole key once as id; GET lists only its public prefix, description and times', async () => {
    const created = await server.api('POST', '/api/key', { token, body: { description: 'erp' } });
    assert.equal(created.status, 200);
    const key: string = created.body.id;
    assert.match(key, /^sgy_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    const list = await server.api('GET', '/api/key', { token });
    const item = list.body.results.find((k: { description: string }) => k.description === 'erp');
    assert.ok(item);
    assert.equal(item.id, key.slice(0, 16));
    assert.ok(!list.text.includes(key), 'the secret never appears in a listing');
    assert.equal(item.apiKeyType, 'generic');
    assert.equal(typeof item.created, 'string');
    assert.ok('lastUsed' in item);
  });

  it('an API key is used in place of a session token, with its owner’s permissions', async () => {
    const key = (await server.api('POST', '/api/key', { token, body: {} })).body.id;
    const me = await server.api('GET', '/login', { token: key });
    assert.equal(me.body.logged, true);
    assert.equal(me.body.user.name, 'integrator');
    const admin = await server.api('POST', '/users', {
      token: key,
      body: { name: 'x1', password: 'whatever-123' },
    });
    assert.equal(admin.status, 403);
    assert.equal(admin.body.code, 'FORBIDDEN');
  });

  it('rotation: a new key made with the old one; both valid until the old one is revoked, which is immediate and final', async () => {
    const oldKey = (await server.api('POST', '/api/key', { token, body: { description: 'old' } })).body.id;
    const newKey = (await server.api('POST', '/api/key', { token: oldKey, body: { description: 'new' } }))
      .body.id;
    assert.equal((await server.api('GET', '/api/key', { token: oldKey })).status, 200);
    assert.equal((await server.api('GET', '/api/key', { token: newKey })).status, 200);
    const revoked = await server.api('DELETE', `/api/key/${oldKey.slice(0, 16)}`, { token: newKey });
    assert.deepEqual(revoked.body, { status: 'SUCCESS' });
    assert.equal((await server.api('GET', '/api/key', { token: oldKey })).status, 401);
    assert.equal((await server.api('GET', '/api/key', { token: newKey })).status, 200);
    const again = await server.api('DELETE', `/api/key/${oldKey.slice(0, 16)}`, { token: newKey });
    assert.equal(again.status, 404);
  });

  it('DELETE /api/key/:token takes the whole key in the path as its own credential (no token query)', async () => {
    const key = (await server.api('POST', '/api/key', { token, body: {} })).body.id;
    const revoked = await server.api('DELETE', `/api/key/${key}`);
    assert.equal(revoked.status, 200);
    assert.equal((await server.api('GET', '/api/key', { token: key })).status, 401);
  });

  it('another user’s key cannot be revoked: 404, and it keeps working', async () => {
    const key = (await server.api('POST', '/api/key', { token, body: {} })).body.id;
    const stranger = (await aUser(server, { name: 'stranger' })).token;
    const attempt = await server.api('DELETE', `/api/key/${key.slice(0, 16)}`, { token: stranger });
    assert.equal(attempt.status, 404);
    assert.equal((await server.api('GET', '/api/key', { token: key })).status, 200);
  });

  it('a key is valid for 10 years by default, not longer', async () => {
    const key = (await server.api('POST', '/api/key', { token, body: {} })).body.id;
    clock.advance(9 * YEAR);
    assert.equal((await server.api('GET', '/login', { token: key })).body.logged, true);
    clock.advance(YEAR + 10 * 86_400_000);
    assert.equal((await server.api('GET', '/login', { token: key })).body.logged, false);
  });
});
