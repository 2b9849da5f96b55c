import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { aDocument } from '../helpers/documents.js';
import { aUser } from '../helpers/people.js';
import { createUser } from '../helpers/server.js';
import { shareDocument } from '../helpers/sharing.js';
import { useServer } from '../helpers/use-server.js';

/**
 * DESIGN, Decided this round: "Scope: audit logs, like reports, events and webhooks, show an
 * organization admin only their organization; global and super admins see the tenant." (issue 37, item 4)
 */
describe('audit log scope: POST /logs/search by organization', () => {
  const server = useServer();
  const the = {} as { legalAdmin: string; globalAdmin: string };

  before(async () => {
    await aRepSharingADocument('Legal', { title: 'Legal merger plan', to: 'counsel@legal.test' });
    await aRepSharingADocument('Sales', { title: 'Sales secret pipeline', to: 'buyer@sales.test' });
    Object.assign(the, {
      legalAdmin: await anAdminOfLegal('legal-admin', 'organizationAdmin'),
      globalAdmin: await anAdminOfLegal('global-admin', 'globalAdmin'),
    });
    // A record is the organization's of what it is about, not of who acted: a tenant administrator
    // who is a member of Legal adds someone to Sales.
    await createUser(server, { name: 'sales-intern', organization: 'Sales' }, the.globalAdmin);
  });

  /** A member of `organization` who makes a document and shares it with an outside address. */
  async function aRepSharingADocument(organization: string, spec: { title: string; to: string }) {
    const rep = await aUser(server, { name: `${organization.toLowerCase()}-rep`, organization });
    const id = await aDocument(server, rep.token, { title: spec.title });
    await shareDocument(server, rep.token, id, { to: spec.to });
  }

  /** An administrator who is a member of Legal, signed in: their session. */
  async function anAdminOfLegal(name: string, role: string): Promise<string> {
    return (await aUser(server, { name, role, organization: 'Legal' })).token;
  }

  /**
   * Every record `token` finds, as the text of the answers: read in a scroll of small pages, so the
   * first page and the continuations are both scoped; all of them add up to the `total` first given.
   */
  async function everythingSeenBy(token: string): Promise<string> {
    const pages: string[] = [];
    let records = 0;
    let body: Record<string, unknown> = { logsQuery: { size: 5 }, scroll: { timeout: 60 } };
    for (;;) {
      const response = await server.api('POST', '/logs/search', { token, body });
      assert.equal(response.status, 200, response.text);
      if (response.body.results.length === 0) {
        assert.equal(records, response.body.total);
        return pages.join('\n');
      }
      pages.push(response.text);
      records += response.body.results.length;
      body = { logsQuery: { size: 5 }, scroll: { id: response.body.scrollId } };
    }
  }

  it('an organization admin searching logs sees their organization and none of another organization’s document names or e-mail addresses', async () => {
    const seen = await everythingSeenBy(the.legalAdmin);
    assert.match(seen, /Legal merger plan/);
    assert.match(seen, /counsel@legal\.test/);
    assert.doesNotMatch(seen, /Sales secret pipeline/);
    assert.doesNotMatch(seen, /buyer@sales\.test/);
    assert.doesNotMatch(seen, /sales-rep/);
    assert.doesNotMatch(seen, /sales-intern/, 'done by a member of Legal, about a user of Sales');
  });

  it('a global admin searching logs sees the whole tenant', async () => {
    const seen = await everythingSeenBy(the.globalAdmin);
    for (const text of [
      /Legal merger plan/,
      /counsel@legal\.test/,
      /Sales secret pipeline/,
      /buyer@sales\.test/,
      /sales-intern/,
    ]) {
      assert.match(seen, text);
    }
  });
});
