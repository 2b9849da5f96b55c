import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { aUser } from '../helpers/people.js';
import { useServer } from '../helpers/use-server.js';

describe('the read side of counters and tenant properties: an operator sees what they set', () => {
  const server = useServer();
  let superAdmin: string;
  let globalAdmin: string;
  let orgAdmin: string;
  let user: string;
  before(async () => {
    superAdmin = await server.adminToken();
    globalAdmin = (await aUser(server, { name: 'gina', role: 'globalAdmin' })).token;
    orgAdmin = (await aUser(server, { name: 'otto', role: 'organizationAdmin' })).token;
    user = (await aUser(server, { name: 'uma' })).token;
  });

  it('GET /counters answers what PUT /counters set, in the shape PUT takes (super-administrators only, spec Versioning 3)', async () => {
    const empty = await server.api('GET', '/counters', { token: superAdmin });
    assert.equal(empty.status, 200, empty.text);
    assert.deepEqual(empty.body, { counters: {} });
    await server.api('PUT', '/counters', { token: superAdmin, body: { counters: { invoice: 7 } } });
    await server.api('PUT', '/counters', { token: superAdmin, body: { counters: { contract: 0 } } });
    const read = await server.api('GET', '/counters', { token: superAdmin });
    assert.deepEqual(read.body, { counters: { invoice: 7, contract: 0 } });
    const roundTrip = await server.api('PUT', '/counters', { token: superAdmin, body: read.body });
    assert.equal(roundTrip.status, 200, 'what GET answers, PUT takes');
    for (const token of [globalAdmin, orgAdmin, user]) {
      const refused = await server.api('GET', '/counters', { token });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.code, 'FORBIDDEN');
    }
    const stranger = await server.api('GET', '/counters');
    assert.equal(stranger.status, 401);
    assert.equal(stranger.body.code, 'UNAUTHENTICATED');
  });

  it('GET /settings/properties answers what PUT /settings/properties set, every property, in the shape PUT takes', async () => {
    const before = await server.api('GET', '/settings/properties', { token: globalAdmin });
    assert.equal(before.status, 200, before.text);
    assert.equal(before.body.isLlmEnabled, false, 'a property never set shows its default');
    assert.equal(before.body.dropZoneMaxSize, 40);
    const set = await server.api('PUT', '/settings/properties', {
      token: globalAdmin,
      body: { isLlmEnabled: true, disabledLanguages: ['fr', 'it'], ownerTransferEnabled: true },
    });
    assert.equal(set.status, 200, set.text);
    const read = await server.api('GET', '/settings/properties', { token: superAdmin });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.isLlmEnabled, true);
    assert.deepEqual(read.body.disabledLanguages, ['fr', 'it']);
    assert.equal(read.body.ownerTransferEnabled, true);
    assert.deepEqual(read.body, set.body.properties, 'GET answers what PUT answered');
    const roundTrip = await server.api('PUT', '/settings/properties', { token: superAdmin, body: read.body });
    assert.equal(roundTrip.status, 200, `what GET answers, PUT takes: ${roundTrip.text}`);
    assert.deepEqual(roundTrip.body.properties, read.body);
  });

  it('GET /settings/properties is for whoever may PUT them (global and super administrators): others 403', async () => {
    for (const token of [orgAdmin, user]) {
      const put = await server.api('PUT', '/settings/properties', { token, body: { isLlmEnabled: false } });
      assert.equal(put.status, 403);
      const get = await server.api('GET', '/settings/properties', { token });
      assert.equal(get.status, 403);
      assert.equal(get.body.code, 'FORBIDDEN');
    }
    const login = await server.api('GET', '/login', { token: user });
    assert.equal(login.body.settings.isLlmEnabled, true, 'users still see their part at login');
  });

  it('both reads are described in the OpenAPI document', async () => {
    const spec = (await server.api('GET', '/openapi.json')).body;
    assert.match(spec.paths['/api/v1/counters'].get.description, /PUT \/counters/);
    assert.match(spec.paths['/api/v1/settings/properties'].get.description, /PUT \/settings\/properties/);
  });
});
