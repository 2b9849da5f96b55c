import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aUser } from '../helpers/people.js';
import { useServer } from '../helpers/use-server.js';

/**
 * Issue 20, item 11 (neighbours of "same-organization reach"): a document definition is the tenant's
 * (one name serves every organization), so an organization administrator changing it would reach into
 * the other organizations. Only global and super administrators create or change one.
 */
describe('document definitions serve the whole tenant: only global and super administrators create or change them', () => {
  const server = useServer();

  it('an organization administrator gets 403 FORBIDDEN creating or changing one; a global administrator may', async () => {
    const orgAdmin = (
      await aUser(server, { name: 'org-admin', organization: 'Sales', role: 'organizationAdmin' })
    ).token;
    const global = (await aUser(server, { name: 'global', organization: 'Head office', role: 'globalAdmin' }))
      .token;
    const created = await server.api('POST', '/definitions/documents/name', {
      token: global,
      body: { name: 'invoice', description: 'Invoices' },
    });
    assert.equal(created.status, 200, created.text);
    for (const [method, path] of [
      ['POST', '/definitions/documents/name'],
      ['PUT', '/definitions/documents/invoice'],
    ] as const) {
      const refused = await server.api(method, path, {
        token: orgAdmin,
        body: method === 'POST' ? { name: 'receipt' } : { description: 'Taken over' },
      });
      assert.equal(refused.status, 403, refused.text);
      assert.equal(refused.body.code, 'FORBIDDEN');
    }
    const read = await server.api('GET', '/definitions/documents/invoice', { token: orgAdmin });
    assert.equal(read.status, 200, 'every organization reads the tenant’s definitions');
    assert.equal(read.body.description, 'Invoices');
  });
});
