import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { aUser } from '../helpers/people.js';
import { useServer } from '../helpers/use-server.js';

describe('configuration, tenant properties, counters and the WOPI client', () => {
  const server = useServer();
  let admin: string;
  before(async () => (admin = await server.adminToken()));

  it('PUT /configuration merges the caller’s preferences, shown in user.config at login', async () => {
    const token = (await aUser(server, { name: 'pat' })).token;
    const set = await server.api('PUT', '/configuration', {
      token,
      body: { configuration: { language: 'de', dateFormat: 'dd.MM.yyyy' } },
    });
    assert.equal(set.status, 200);
    assert.equal(set.body.status, 'SUCCESS');
    const me = await server.api('GET', '/login', { token });
    assert.equal(me.body.user.config.language, 'de');
    assert.deepEqual(me.body.user.config.signature, []);
  });

  it('PUT /configuration cannot change authenticationFactors, filters, password or configuration.photo', async () => {
    const forbidden: [unknown, string][] = [
      [{ configuration: {}, authenticationFactors: ['sms'] }, '"authenticationFactors" is not allowed'],
      [{ configuration: {}, filters: [] }, '"filters" is not allowed'],
      [{ configuration: {}, password: 'new-password-1' }, '"password" is not allowed'],
      [{ configuration: { photo: 'abc' } }, '"configuration.photo" is not allowed'],
    ];
    for (const [body, message] of forbidden) {
      const response = await server.api('PUT', '/configuration', { token: admin, body });
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 'VALIDATION_ERROR');
      assert.ok(response.body.message.includes(message), response.body.message);
    }
  });

  it('spec PUT /configuration “cannot change `authenticationFactors`, `filters`, `password`, `configuration.photo`”: refused wherever they appear in the configuration (400 naming the field), and never shown by the login answer', async () => {
    const token = (await aUser(server, { name: 'quinn' })).token;
    const refused: [Record<string, unknown>, string][] = [
      [{ password: 'x', authenticationFactors: 'x', filters: 'x' }, '"configuration.password"'],
      [{ authenticationFactors: 'x' }, '"configuration.authenticationFactors"'],
      [{ filters: 'x' }, '"configuration.filters"'],
      [{ Password: 'x' }, '"configuration.Password"'],
      [{ notifications: { email: true, password: 'x' } }, '"configuration.notifications.password"'],
      [{ ui: { panels: [{ name: 'a' }, { filters: [] }] } }, '"configuration.ui.panels[1].filters"'],
      [{ a: { b: { c: { photo: 'abc' } } } }, '"configuration.a.b.c.photo"'],
      [{ a: { AuthenticationFactors: ['sms'] } }, '"configuration.a.AuthenticationFactors"'],
    ];
    for (const [configuration, field] of refused) {
      const response = await server.api('PUT', '/configuration', { token, body: { configuration } });
      assert.equal(response.status, 400, JSON.stringify(configuration));
      assert.equal(response.body.code, 'VALIDATION_ERROR');
      assert.ok(response.body.message.includes(`${field} is not allowed`), response.body.message);
      assert.ok(!response.text.includes('"x"'), 'the value is not echoed');
    }
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 40; i++) deep = { deeper: deep };
    const tooDeep = await server.api('PUT', '/configuration', { token, body: { configuration: deep } });
    assert.equal(tooDeep.status, 400);
    assert.equal(tooDeep.body.code, 'VALIDATION_ERROR');

    const me = await server.api('GET', '/login', { token });
    assert.equal(me.status, 200);
    assert.equal(me.body.user.config.password, undefined);
    assert.equal(me.body.user.config.filters, undefined);
    assert.deepEqual(me.body.user.authenticationFactors, ['password'], 'the real factors, not the blob’s');

    // A configuration stored before the rule held (written straight to the store, as an old release
    // would have left it) is shown without those keys.
    const user = await server.app.deps.db
      .selectFrom('users')
      .select('id')
      .where('name', '=', 'quinn')
      .executeTakeFirstOrThrow();
    await server.app.deps.db
      .updateTable('users')
      .set({
        config: JSON.stringify({
          language: 'fr',
          password: 'x',
          authenticationFactors: 'x',
          filters: 'x',
          nested: { password: 'x', keep: 1 },
          signature: [],
        }),
      })
      .where('id', '=', user.id)
      .execute();
    const login = await server.api('POST', '/login', {
      body: { name: 'quinn', password: 'user-password-1' },
    });
    for (const answer of [login, await server.api('GET', '/login', { token })]) {
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.body.user.config, { language: 'fr', nested: { keep: 1 }, signature: [] });
      assert.ok(!answer.text.includes('"password":"x"'));
    }
    const kept = await server.api('PUT', '/configuration', {
      token,
      body: { configuration: { theme: 'dark' } },
    });
    assert.equal(kept.status, 200);
    assert.equal(kept.body.configuration.password, undefined, 'nor does PUT /configuration answer them');
  });

  it('PUT /settings/properties changes the login settings (isLlmEnabled, wopiClient, disabledLanguages) and GET reads them', async () => {
    const set = await server.api('PUT', '/settings/properties', {
      token: admin,
      body: { isLlmEnabled: true, wopiClient: 'onlyoffice', disabledLanguages: ['fr'] },
    });
    assert.equal(set.status, 200);
    assert.equal(set.body.properties.wopiClient, 'onlyoffice');
    const login = await server.api('GET', '/login', { token: admin });
    assert.equal(login.body.settings.isLlmEnabled, true);
    assert.equal(login.body.settings.wopiClient, 'onlyoffice');
    assert.deepEqual(login.body.settings.disabledLanguages, ['fr']);
    const read = await server.api('GET', '/settings/properties', { token: admin });
    assert.equal(read.body.isLlmEnabled, true);
    const unknown = await server.api('PUT', '/settings/properties', {
      token: admin,
      body: { colour: 'red' },
    });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.message, 'Request validation errors: BODY ERRORS: "colour" is not allowed');
  });

  it('GET /wopi/extensions answers {client, extensions} for the configured client', async () => {
    await server.api('PUT', '/settings/properties', { token: admin, body: { wopiClient: 'collabora' } });
    const response = await server.api('GET', '/wopi/extensions', { token: admin });
    assert.equal(response.body.client, 'collabora');
    assert.ok(response.body.extensions.includes('docx'));
    await server.api('PUT', '/settings/properties', { token: admin, body: { wopiClient: null } });
    assert.deepEqual((await server.api('GET', '/wopi/extensions', { token: admin })).body, {
      client: '',
      extensions: [],
    });
  });

  it('PUT /counters is for super-administrators only (spec Versioning 3)', async () => {
    const global = (await aUser(server, { name: 'global', role: 'globalAdmin' })).token;
    const refused = await server.api('PUT', '/counters', {
      token: global,
      body: { counters: { invoice: 7 } },
    });
    assert.equal(refused.status, 403);
    const set = await server.api('PUT', '/counters', { token: admin, body: { counters: { invoice: 7 } } });
    assert.equal(set.status, 200);
    assert.deepEqual(set.body.counters, { invoice: 7 });
    assert.deepEqual((await server.api('GET', '/counters', { token: admin })).body, {
      counters: { invoice: 7 },
    });
    const negative = await server.api('PUT', '/counters', {
      token: admin,
      body: { counters: { invoice: -1 } },
    });
    assert.equal(negative.status, 400);
  });
});
