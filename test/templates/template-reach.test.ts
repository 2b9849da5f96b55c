import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { makePdf } from '../helpers/pdf.js';
import { createUser, upload } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';

/**
 * spec Template: "Stored records also have `__id`, `__addedBy`, `__addedOn`, `__owner`, `__users`
 * (array), `__groups` (array)." Issue 20, item 11: "templates are visible to their owner, the users
 * and groups named, and administrators" — not to the whole organization. Invisible is 404 (Contract:
 * "unknown id, or one the caller may not see (never leak existence)"); visible but not theirs to
 * change is 403.
 */
describe('templates are visible to their owner, the users and groups named, and administrators', () => {
  const server = useServer();
  const token: Record<string, string> = {};
  let team: string;

  before(async () => {
    const rights = ['use_file_management', 'use_document_management'];
    await createUser(server, { name: 'alice', organization: 'Team', rights });
    await createUser(server, { name: 'bob', organization: 'Team', rights });
    await createUser(server, { name: 'carol', organization: 'Team', rights });
    await createUser(server, { name: 'team-admin', organization: 'Team', role: 'organizationAdmin' });
    await createUser(server, { name: 'other-admin', organization: 'Elsewhere', role: 'organizationAdmin' });
    for (const name of ['alice', 'bob', 'carol', 'team-admin', 'other-admin'])
      token[name] = await server.login(name, 'user-password-1');
    token.global = await server.adminToken();
    const groups = await server.api('POST', '/groups/search', { token: token.alice!, body: {} });
    assert.equal(groups.status, 200, groups.text);
    team = groups.body.results[0].id;
  });

  /** alice's template over a fresh upload, shown to `audience`. */
  const aTemplate = async (audience: Record<string, unknown> = {}) => {
    const file = await upload(server, token.alice!, makePdf());
    const created = await server.api('POST', '/templates', {
      token: token.alice!,
      body: { data: { name: 'NDA', file, ...audience } },
    });
    assert.equal(created.status, 200, created.text);
    return { id: created.body.id as string, file };
  };
  /** What `who` gets from reading the template, downloading its file and editing it. */
  const reach = async (who: string, template: { id: string; file: string }) => {
    const read = await server.api('GET', `/templates/${template.id}`, { token: token[who] });
    const file = await server.api('GET', `/files/loadFile/hash/${template.file}`, { token: token[who] });
    const edit = await server.api('PUT', '/templates', {
      token: token[who],
      body: { id: template.id, data: { name: `edited by ${who}`, file: template.file } },
    });
    if (edit.status >= 400) assert.equal(edit.body.code, edit.status === 404 ? 'NOT_FOUND' : 'FORBIDDEN');
    return [read.status, file.status, edit.status];
  };

  it('a template names nobody by default: same-organization users get 404 on GET, its file and PUT', async () => {
    const template = await aTemplate();
    const record = await server.api('GET', `/templates/${template.id}`, { token: token.alice });
    assert.deepEqual(record.body.__groups, [], 'not the whole organization');
    assert.deepEqual(await reach('bob', template), [404, 404, 404]);
    assert.deepEqual(await reach('other-admin', template), [404, 404, 404], 'another organization’s admin');
    const unknown = await server.api('GET', '/templates/no-such-template', { token: token.bob });
    assert.deepEqual([unknown.status, unknown.body.code], [404, 'NOT_FOUND'], 'invisible reads like unknown');
  });

  it('administrators of its organization (and of the tenant) see and change it', async () => {
    const template = await aTemplate();
    assert.deepEqual(await reach('team-admin', template), [200, 200, 200]);
    assert.deepEqual(await reach('global', template), [200, 200, 200]);
  });

  it('"__users": a user named sees it (403 on change), others in the organization still do not', async () => {
    const template = await aTemplate({ __users: ['bob'] });
    const bobId = (await server.api('GET', `/templates/${template.id}`, { token: token.bob })).body.__users;
    assert.equal(bobId.length, 1, 'stored as the user id');
    assert.deepEqual(await reach('bob', template), [200, 200, 403]);
    assert.deepEqual(await reach('carol', template), [404, 404, 404]);
    assert.deepEqual(await reach('alice', template), [200, 200, 200], 'the owner');
  });

  it('"__groups": the members of a group named see it (403 on change)', async () => {
    const template = await aTemplate({ __groups: [team] });
    assert.deepEqual(await reach('carol', template), [200, 200, 403]);
    assert.deepEqual(await reach('other-admin', template), [404, 404, 404]);
  });

  it('the owner changes the audience with PUT; unknown users or groups are 400 VALIDATION_ERROR', async () => {
    const template = await aTemplate();
    const shown = await server.api('PUT', '/templates', {
      token: token.alice!,
      body: { id: template.id, data: { name: 'NDA', __users: ['carol'] } },
    });
    assert.equal(shown.status, 200, shown.text);
    assert.equal((await server.api('GET', `/templates/${template.id}`, { token: token.carol })).status, 200);
    for (const audience of [{ __users: ['nobody'] }, { __groups: ['no-such-group'] }]) {
      const refused = await server.api('POST', '/templates', {
        token: token.alice!,
        body: { data: { name: 'x', ...audience } },
      });
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.body.code, 'VALIDATION_ERROR');
      assert.match(refused.body.message, /"data\.__(users|groups)\[0\]" must name a (user|group)/);
    }
  });
});
