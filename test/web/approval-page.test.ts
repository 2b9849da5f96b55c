import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SIGNER_PAGE_CSP } from '../../src/http/routes/signer-page.js';
import { anAgentKey } from '../agents/agent-keys.js';
import { aDocument } from '../helpers/documents.js';
import { aUser, OWNER } from '../helpers/people.js';
import { decode } from '../helpers/smtp.js';
import { useServer } from '../helpers/use-server.js';
import { describeInChromium, ensureBuiltPage, inSession, type Session } from './browser.js';

/**
 * Issue 42, Deliver 3: "A person with the right to do the act approves or rejects it through the API
 * … or from a link mailed to the key's owner". The agent proposes through the real /mcp (the official
 * SDK's client); the owner's mail links to /approve/<id>, which carries no credential: the owner signs
 * in on that page, reads what the agent asked, and decides, in Debian's chromium.
 */
describe('the approval page (/approve/<id>): a person decides what an agent asked, from the mailed link', () => {
  before(() => ensureBuiltPage());
  const server = useServer({ smtp: true });
  let ownerToken: string;
  let agent: Client;

  /** prepare_share through /mcp: the id of the pending action, and the link the owner was mailed. */
  async function proposeShare(title: string, to: string): Promise<{ id: string; path: string }> {
    const documentId = await aDocument(server, ownerToken, { title });
    const answer = (await agent.callTool({
      name: 'prepare_share',
      arguments: { id: documentId, data: [{ sharePurpose: 'sign', shareTo: to }] },
    })) as { content: { text: string }[] };
    const { pendingActionId } = JSON.parse(answer.content[0]!.text) as { pendingActionId: string };
    const mail = decode(
      (await server.smtp.waitFor(OWNER.email, new RegExp(`/approve/${pendingActionId}`))).raw,
    );
    const link = /https?:\/\/\S+\/approve\/[\w-]+/.exec(mail)?.[0];
    assert.ok(link, 'the mail carries the approval link');
    return { id: pendingActionId, path: new URL(link).pathname };
  }

  before(async () => {
    ownerToken = (await aUser(server, OWNER)).token;
    const key = await anAgentKey(server, ownerToken);
    agent = new Client({ name: 'approval-page-test', version: '1.0.0' });
    await agent.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
  });
  after(async () => {
    await agent?.close();
  });

  it('GET /approve/<id> answers the prepare page’s build with its policy, and no credential is needed to open it', async () => {
    const response = await fetch(`${server.url}/approve/0b5e7c1a-3f2d-4e8b-9a6c-1d2e3f4a5b6c`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-security-policy'), SIGNER_PAGE_CSP);
    assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
    assert.match(await response.text(), /<script[^>]*src="\/web\/assets\/prepare-[\w-]{8}\.js"/);
  });

  describeInChromium('in headless Chromium', (browser) => {
    async function signIn(s: Session): Promise<void> {
      await s.page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await s.page.getByLabel('User name').fill(OWNER.name);
      await s.page.getByLabel('Password').fill('user-password-1');
      await s.page.getByRole('button', { name: 'Sign in' }).click();
    }

    it('the owner signs in from the mailed link, reads the act and the exact request, approves: the recipient is mailed', async () => {
      const { id, path } = await proposeShare('Lease 2028', 'rae@example.org');
      await inSession(browser(), 'approval-approve', 'phone', async (s) => {
        await s.page.goto(`${server.url}${path}`);
        await signIn(s);
        await s.page.getByRole('heading', { name: 'An AI agent asks for your approval' }).waitFor();
        await s.capture('approval');
        assert.equal(await s.page.locator('[data-act]').innerText(), 'share it with rae@example.org (sign)');
        assert.match(await s.page.locator('.approval-facts').innerText(), /Lease 2028/);
        await s.page.getByText('The exact request').click();
        assert.match(
          await s.page.locator('.approval-request pre').innerText(),
          /"shareTo": "rae@example.org"/,
        );
        assert.ok(!s.problems.length, s.problems.join('\n'));
        assert.ok(
          !server.smtp.messages.some((m) => m.to.includes('rae@example.org')),
          'nothing sent before the decision',
        );
        await s.page.getByRole('button', { name: 'Approve and do it' }).click();
        await s.page.getByText(`Approved by ${OWNER.name}: done.`).waitFor();
        await s.capture('approved');
      });
      await server.smtp.waitFor('rae@example.org', /Lease 2028/);
      const action = await server.api('GET', `/agent-actions/${id}`, { token: ownerToken });
      assert.deepEqual([action.body.state, action.body.decidedBy], ['executed', OWNER.name]);
    });

    it('rejects with a reason told to the agent; a decided action shows its decision and no buttons', async () => {
      const { id, path } = await proposeShare('Lease 2029', 'sol@example.org');
      await inSession(browser(), 'approval-reject', 'desktop', async (s) => {
        await s.page.goto(`${server.url}${path}`);
        await signIn(s);
        await s.page.getByLabel('Reason, told to the agent (optional)').fill('Wrong tenant');
        await s.page.getByRole('button', { name: 'Reject' }).click();
        await s.page.getByText(`Rejected by ${OWNER.name}: nothing was done.`).waitFor();
        await s.page.reload();
        await s.page.getByText(`Rejected by ${OWNER.name}: nothing was done.`).waitFor();
        assert.equal(await s.page.getByRole('button', { name: 'Approve and do it' }).count(), 0);
      });
      const action = await server.api('GET', `/agent-actions/${id}`, { token: ownerToken });
      assert.deepEqual([action.body.state, action.body.outcome], ['rejected', { reason: 'Wrong tenant' }]);
      assert.ok(!server.smtp.messages.some((m) => m.to.includes('sol@example.org')));
    });
  });
});
